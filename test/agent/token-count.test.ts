import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicChatProvider, createOpenAIChatProvider } from '../../src/model/chat-providers.js';
import type { Message } from '../../src/agent/context.js';
import type { Summariser } from '../../src/agent/rolling-summary.js';
import { runAgent } from '../../src/agent/run-agent.js';
import {
  charsPerTokenFor,
  estimateTokensAt,
  scriptRatiosFrom,
  SCRIPT_CHARS_PER_TOKEN,
} from '../../src/agent/token-count.js';
import { startFakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { ChatConfig } from '../../src/config/schema.js';
import { emptyUsage } from '../../src/model/types.js';
import { useFakeAnthropic } from '../support/fixtures.js';

const fake = useFakeAnthropic({ scope: 'all' });
let client: Anthropic;
beforeAll(async () => {
  client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
});

function history(chars: number): Message[] {
  return [
    { role: 'user', content: `first ${'a'.repeat(chars)}` },
    { role: 'assistant', content: [{ type: 'text', text: `reply ${'b'.repeat(chars)}` }] },
    { role: 'user', content: `second ${'c'.repeat(chars)}` },
    { role: 'assistant', content: [{ type: 'text', text: `reply ${'d'.repeat(chars)}` }] },
    { role: 'user', content: 'and now?' },
  ];
}

describe('counting tokens', () => {
  it('uses 3.5 characters a token for English and 4.0 for Portuguese, and what the config sets', () => {
    expect(charsPerTokenFor('en')).toBe(3.5);
    expect(charsPerTokenFor('pt')).toBe(4.0);
    expect(charsPerTokenFor('pt-BR')).toBe(4.0);
    expect(charsPerTokenFor('zh')).toBe(3.5);
    expect(charsPerTokenFor('zh', { zh: 1.5 })).toBe(1.5);
    const config = ChatConfig.parse({ language: 'pt', charsPerToken: { pt: 4.2 } });
    expect(charsPerTokenFor(config.language, config.charsPerToken)).toBe(4.2);
    expect(estimateTokensAt('a'.repeat(35), 3.5)).toBe(10);
    expect(ChatConfig.safeParse({ compactAt: 1.5 }).success).toBe(false);
    expect(ChatConfig.safeParse({ charsPerToken: { pt: 0 } }).success).toBe(false);
  });

  it("asks Anthropic's counting endpoint near the budget, and the exact count decides", async () => {
    let summaries = 0;
    const summariser: Summariser = {
      async generateText() {
        summaries += 1;
        return { value: 'summary', usage: emptyUsage(), attempts: 1 };
      },
    };
    const messages = history(1_600);
    // ~6,500 characters: ~1,860 tokens at 3.5, ~1,640 by the fake endpoint's 4 characters a token.
    const budget = 1_750;
    expect(estimateTokensAt(messages, 3.5)).toBeGreaterThan(budget);
    fake.server.enqueue({ text: 'fine' });
    const provider = createAnthropicChatProvider({
      client,
      model: 'claude-haiku-5-5',
      contextManagement: 'client',
    });
    const result = await runAgent({ provider, system: '', messages, contextBudget: budget, summariser });
    expect(result.text).toBe('fine');
    expect(fake.server.countRequests.length).toBeGreaterThan(0);
    expect(summaries).toBe(0); // the exact count fits: nothing was folded
    expect(fake.server.requests.at(-1)!.body.messages).toHaveLength(5);
  });

  it('counts each dense script at its own ratio by default, overridable by script name', () => {
    expect(estimateTokensAt('我'.repeat(100), 3.5)).toBe(100);
    expect(estimateTokensAt('한'.repeat(100), 3.5)).toBe(100);
    expect(estimateTokensAt('ไ'.repeat(150), 3.5)).toBe(100);
    expect(estimateTokensAt('д'.repeat(250), 3.5)).toBe(100);
    // Mixed: 35 Latin characters at 3.5 and 10 Han characters at 1.
    expect(estimateTokensAt(`${'a'.repeat(35)}${'字'.repeat(10)}`, 3.5)).toBe(20);
    // A Han character outside the Basic Multilingual Plane is one character, not two UTF-16 units.
    expect(estimateTokensAt('𠀀'.repeat(10), 3.5)).toBe(10);
    const ratios = scriptRatiosFrom({ cjk: 1.5, en: 3.5 });
    expect(ratios).toEqual({ ...SCRIPT_CHARS_PER_TOKEN, cjk: 1.5 });
    expect(estimateTokensAt('我'.repeat(150), 3.5, ratios)).toBe(100);
  });

  it('keeps a Chinese chat inside an 8,192-token local model', async () => {
    const local = await startFakeOpenAIServer();
    try {
      local.setDefault({ text: '好的' });
      const provider = createOpenAIChatProvider({
        client: new OpenAI({ apiKey: 'k', baseURL: local.url, maxRetries: 0 }),
        model: 'qwen3:4b',
      });
      // Twelve turns of 1,200 Han characters: about 14,400 tokens, 4,100 by English's 3.5 characters a token.
      const turn = (index: number) => `第${index}轮：${'我们讨论了项目的进度和下一步计划'.repeat(75)}`;
      const messages: Message[] = [];
      for (let index = 0; index < 12; index++) {
        messages.push({ role: 'user', content: turn(index) });
        messages.push({ role: 'assistant', content: [{ type: 'text', text: '明白了。' }] });
      }
      messages.push({ role: 'user', content: '总结一下？' });
      const summariser: Summariser = {
        async generateText() {
          return { value: '之前讨论了项目进度。', usage: emptyUsage(), attempts: 1 };
        },
      };
      const budget = Math.floor(provider.contextWindow * 0.8);
      await runAgent({ provider, system: '', messages, contextBudget: budget, summariser });
      const sent = JSON.stringify(local.requests.at(-1)!.body.messages);
      const hanCharacters = sent.match(/\p{Script=Han}/gu)?.length ?? 0;
      // About a token a Han character: what reached the model fits its window.
      expect(hanCharacters).toBeLessThanOrEqual(8_192);
      expect(hanCharacters).toBeGreaterThan(1_000); // the recent turns are still there
    } finally {
      await local.close();
    }
  });

  it('has no counting endpoint for OpenAI-compatible models: the estimate decides', () => {
    const provider = createOpenAIChatProvider({
      client: new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' }),
      model: 'qwen3:4b',
    });
    expect('countTokens' in provider && provider.countTokens !== undefined).toBe(false);
    expect(provider.contextWindow).toBe(8_192);
  });
});
