import { mkdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../src/agent/context.js';
import { createMemoryAgent } from '../../src/agent/memory-agent.js';
import {
  compactHistory,
  foldIntoSummary,
  foldPoints,
  renderContext,
  type Summariser,
} from '../../src/agent/rolling-summary.js';
import { runAgent, type AgentEvent } from '../../src/agent/run-agent.js';
import { estimateTokensAt } from '../../src/agent/token-count.js';
import { defineTool } from '../../src/agent/tool.js';
import { ChatConfig, ModelConfig, type Space } from '../../src/config/schema.js';
import type { GenerateTextRequest } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { useAgentFixture } from './support/agent-fixture.js';

/** A summariser that implements the real interface and records every request (no network). */
function recordingSummariser(answer = (request: GenerateTextRequest) => `S(${request.prompt.length})`) {
  const requests: GenerateTextRequest[] = [];
  const summariser: Summariser = {
    async generateText(request) {
      requests.push(request);
      return { value: answer(request), usage: emptyUsage(), attempts: 1 };
    },
  };
  return { summariser, requests };
}

const failing: Summariser = {
  async generateText() {
    throw new Error('summariser down (HTTP 500)');
  },
};

function turns(count: number, chars: number, from = 0): Message[] {
  return Array.from({ length: count }, (_, position): Message[] => {
    const index = from + position;
    return [
      { role: 'user', content: `question ${index} ${'q'.repeat(chars)}` },
      { role: 'assistant', content: [{ type: 'text', text: `answer ${index} ${'a'.repeat(chars)}` }] },
    ];
  }).flat();
}

/** Every tool_result in a request answers a tool_use of the assistant message just before it. */
function pairsIntact(messages: readonly Message[]): boolean {
  return messages.every((message, index) => {
    if (typeof message.content === 'string') return true;
    const previous = messages[index - 1];
    const calls = new Set(
      previous !== undefined && typeof previous.content !== 'string'
        ? previous.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [],
    );
    return message.content.every((block) => block.type !== 'tool_result' || calls.has(block.tool_use_id));
  });
}

describe('folding messages into the running summary', () => {
  it('cuts each message to 500 characters before the summariser sees it', async () => {
    const { summariser, requests } = recordingSummariser();
    await foldIntoSummary('', turns(2, 3_000), summariser);
    expect(requests).toHaveLength(1);
    for (const line of requests[0]!.prompt.split('\n').filter((text) => /^(user|assistant): /.test(text)))
      expect(line.length).toBeLessThanOrEqual('assistant: '.length + 500);
  });

  it("caps each call to the summariser's context, folding chunk after chunk", async () => {
    const { summariser, requests } = recordingSummariser(() => 'short summary');
    const history = turns(200, 600); // 400 messages × ~500 characters after the cut: ~200,000 characters
    const result = await foldIntoSummary('', history, summariser, { contextTokens: 4_096 });
    expect(requests.length).toBeGreaterThan(1);
    for (const request of requests)
      expect(estimateTokensAt(request.system + request.prompt, 3.5)).toBeLessThanOrEqual(4_096);
    // Each call after the first carries the summary so far.
    expect(requests[1]!.prompt).toContain('short summary');
    expect(result.calls).toBe(requests.length);
  });

  it('summarises only what left the window since the last summary', async () => {
    const { summariser, requests } = recordingSummariser(
      (request) => `summary after ${request.prompt.length}`,
    );
    const history = turns(20, 400);
    const first = await compactHistory(history, undefined, summariser, { targetTokens: 2_000 });
    expect(first.summary!.cut).toBeGreaterThan(0);
    const more = [...history, ...turns(10, 400, 20)];
    const second = await compactHistory(more, first.summary, summariser, { targetTokens: 2_000 });
    expect(second.summary!.cut).toBeGreaterThan(first.summary!.cut);
    expect(requests[1]!.prompt).toContain(first.summary!.text);
    // The messages folded by the first call are not sent again.
    expect(requests[1]!.prompt).not.toContain('question 0 ');
    expect(second.folded).toBe(second.summary!.cut - first.summary!.cut);
  });

  it('falls back to a cut with a note when the summariser fails', async () => {
    const history = turns(20, 400);
    const result = await compactHistory(history, undefined, failing, { targetTokens: 1_500 });
    expect(result.failure).toMatch(/summariser down/);
    expect(result.summary!.text).toMatch(/without a summary/);
    const rendered = renderContext(history, result.summary);
    expect(estimateTokensAt(rendered, 3.5)).toBeLessThanOrEqual(1_500 + 200);
    expect(rendered[0]!.role).toBe('user');
  });

  it('cuts inside one tool-using turn only between whole rounds, keeping the task', () => {
    const task: Message = { role: 'user', content: 'do the task' };
    const rounds: Message[] = Array.from({ length: 3 }, (_, index): Message[] => [
      { role: 'assistant', content: [{ type: 'tool_use', id: `t${index}`, name: 'look', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${index}`, content: 'seen' }] },
    ]).flat();
    const history = [task, ...rounds];
    expect(foldPoints(history)).toEqual([
      { cut: 3, task: 0 },
      { cut: 5, task: 0 },
    ]);
    const rendered = renderContext(history, { text: 'rounds 1-2 looked', cut: 5, task: 0 });
    expect(rendered).toHaveLength(3);
    expect(JSON.stringify(rendered[0])).toContain('do the task');
    expect(JSON.stringify(rendered[0])).toContain('rounds 1-2 looked');
    expect(pairsIntact(rendered)).toBe(true);
  });
});

describe('the rolling summary in the agent loop', () => {
  const agentFixture = useAgentFixture('rolling');
  const { fake } = agentFixture;
  /** A native space in the test's temp folder, its memory folder made (and empty). */
  async function nativeSpace(): Promise<Space> {
    const space = agentFixture.space('s');
    await mkdir(space.memoryDir, { recursive: true });
    return space;
  }

  const bigResult = defineTool({
    name: 'read_log',
    description: 'Reads one page of the log.',
    input: z.object({ page: z.int() }),
    run: async ({ page }) => `page ${page}: ${'log line. '.repeat(400)}`,
  });

  it('folds a 40-round agentic turn under the budget, pairs kept, the task kept', async () => {
    let round = 0;
    fake.server.setDefault((request) => {
      if (request.system.includes('running summary')) return { text: 'Pages read so far: nothing odd.' };
      round += 1;
      return round <= 40
        ? { toolUse: [{ name: 'read_log', input: { page: round }, id: `toolu_${round}` }] }
        : { text: 'Done: the log is clean.' };
    });
    const events: AgentEvent[] = [];
    const budget = 6_000;
    const { summariser } = recordingSummariser(() => 'Pages read so far: nothing odd.');
    const result = await runAgent({
      client: agentFixture.client,
      model: 'claude-haiku-5-5',
      contextManagement: 'client',
      keepToolResults: 40, // nothing cleared: the fold alone must keep the turn under the budget
      system: 'You read logs.',
      messages: [{ role: 'user', content: 'Read the 40 pages of the log and tell me if anything is odd.' }],
      tools: [bigResult],
      maxTurns: 45,
      contextBudget: budget,
      summariser,
      onEvent: (event) => events.push(event),
    });
    expect(result.text).toBe('Done: the log is clean.');
    expect(result.turns).toBe(41);
    expect(events.some((event) => event.type === 'context-summarised')).toBe(true);
    for (const request of fake.server.requests) {
      const messages = request.body.messages as Message[];
      // Near the budget the loop asks the fake's count_tokens endpoint (4 characters a token): that decides.
      expect(estimateTokensAt(request.system, 4) + estimateTokensAt(messages, 4)).toBeLessThanOrEqual(budget);
      expect(pairsIntact(messages)).toBe(true);
      expect(JSON.stringify(messages[0])).toContain('Read the 40 pages');
    }
    // The history itself is whole: every round is still there for the recorder.
    expect(result.messages).toHaveLength(1 + 40 * 2 + 1);
  });

  it('goes on when the summariser fails, within the budget', async () => {
    fake.server.setDefault((request) => ({ text: `answer ${request.index} ${'x'.repeat(2_000)}` }));
    const events: AgentEvent[] = [];
    const result = await runAgent({
      client: agentFixture.client,
      model: 'claude-haiku-5-5',
      system: 'Be brief.',
      messages: [...turns(12, 2_000), { role: 'user', content: 'and now?' }],
      contextBudget: 4_000,
      summariser: failing,
      onEvent: (event) => events.push(event),
    });
    expect(result.stopReason).toBe('end_turn');
    const failure = events.find((event) => event.type === 'summary-failed');
    expect(failure).toMatchObject({ message: expect.stringContaining('summariser down') });
    const sent = fake.server.requests[0]!.body.messages as Message[];
    expect(estimateTokensAt(sent, 3.5)).toBeLessThanOrEqual(4_000);
    expect(JSON.stringify(sent.at(-1))).toContain('and now?');
  });

  it('is on by default in createMemoryAgent, at 80 % of the configured window', async () => {
    const space = await nativeSpace();
    let summaries = 0;
    fake.server.setDefault((request) => {
      if (request.system.includes('running summary')) {
        summaries += 1;
        return { text: 'The user asked about many stops.' };
      }
      return { text: `reply ${'y'.repeat(3_000)}` };
    });
    const agent = await createMemoryAgent({
      space,
      config: { ...agentFixture.config(), chat: ChatConfig.parse({ contextWindow: 8_192 }) },
      client: agentFixture.client,
    });
    expect(agent.contextBudget).toBe(Math.floor(8_192 * 0.8));
    for (let turn = 0; turn < 12; turn++) await agent.chat(`stop ${turn} ${'z'.repeat(2_000)}`);
    await agent.end();
    expect(summaries).toBeGreaterThan(0);
    expect(agent.summary?.text).toBe('The user asked about many stops.');
  });

  it('summarises with chat.summaryModel, a smaller model on the same endpoint, and chats with the chat model', async () => {
    const space = await nativeSpace();
    fake.server.setDefault((request) =>
      request.system.includes('running summary')
        ? { text: 'Earlier stops summarised.' }
        : { text: `reply ${'y'.repeat(3_000)}` },
    );
    const before = fake.server.requests.length;
    const agent = await createMemoryAgent({
      space,
      config: {
        model: ModelConfig.parse({
          name: 'claude-haiku-5-5',
          apiKey: 'k',
          baseUrl: fake.url,
          maxRetries: 0,
        }),
        embeddings: undefined,
        chat: ChatConfig.parse({ contextWindow: 8_192, summaryModel: 'claude-haiku-4-5' }),
      },
    });
    for (let turn = 0; turn < 12; turn++) await agent.chat(`stop ${turn} ${'z'.repeat(2_000)}`);
    await agent.end();
    const requests = fake.server.requests.slice(before);
    const summaryCalls = requests.filter((request) => request.system.includes('running summary'));
    const chatCalls = requests.filter((request) => !request.system.includes('running summary'));
    expect(summaryCalls.length).toBeGreaterThan(0);
    expect(new Set(summaryCalls.map((request) => request.body.model))).toEqual(new Set(['claude-haiku-4-5']));
    expect(new Set(chatCalls.map((request) => request.body.model))).toEqual(new Set(['claude-haiku-5-5']));
  });
});
