/**
 * Figures of the agent side (`dreamd chat` / `createMemoryAgent`), against the fake Anthropic server (the
 * real SDK over HTTP). Token counts are the fake server's (4 characters a token, the same rule for every
 * part, so the parts compare).
 *
 * 1. Input tokens per call with a 70 KB memory (topic files written by `renderMemory`): the request's
 *    system prompt, tools and messages, at 4 characters a token, against the target `MEMORY.md` + 2,000 retrieved tokens +
 *    the fixed part (instructions, tools and the message, measured with an empty memory). The old way, every
 *    topic file whole in the prompt, is shown beside it.
 * 2. Summariser characters over a 30-turn chat in an 8,192-token window (compaction at 80 %): every
 *    character sent to the summariser (instructions and prompts), against the characters of the history
 *    itself; also at 10 and 20 turns, to show it grows linearly.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createMemoryAgent } from '../../src/agent/memory-agent.js';
import { ModelConfig, ChatConfig, type Space } from '../../src/config/schema.js';
import {
  startFakeAnthropicServer,
  type RecordedAnthropicRequest,
} from '../../harness/fake-anthropic-server.js';
import { writeLargeMemory } from '../../harness/large-memory.js';
import type { Figure } from '../report.js';
import { makeTempRoot } from '../setup.js';
import { tokensOf } from '../stats.js';

const MEMORY_BYTES = 70_000;
const RETRIEVAL_TOKENS = 2_000;
const TURNS = 30;
const SUMMARY_MARK = 'running summary';

function space(root: string, id: string): Space {
  return {
    id,
    sessionsDir: join(root, id, 'sessions'),
    memoryDir: join(root, id, 'memory'),
    format: 'native',
  };
}

function requestChars(request: RecordedAnthropicRequest): number {
  return (
    request.system.length +
    JSON.stringify(request.body.messages).length +
    JSON.stringify(request.body.tools ?? []).length
  );
}

export async function measureChatFigures(log: (line: string) => void): Promise<Figure[]> {
  const root = await makeTempRoot('chat');
  const server = await startFakeAnthropicServer();
  try {
    const client = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: server.url, maxRetries: 0 });
    const model = ModelConfig.parse({ apiKey: 'sk-ant-bench', baseUrl: server.url, maxRetries: 0 });
    const message = 'Can you recommend a restaurant for tonight? Nothing spicy, please.';
    const inputOf = (request: RecordedAnthropicRequest | undefined): number => {
      if (request === undefined) return Number.NaN;
      return tokensOf(requestChars(request));
    };
    const oneCall = async (target: Space, includeTopics: boolean) => {
      await mkdir(target.memoryDir, { recursive: true });
      const agent = await createMemoryAgent({
        space: target,
        config: { model, embeddings: undefined },
        client,
        includeTopics,
      });
      server.enqueue({ text: 'Try the mild place on the corner.' });
      const result = await agent.chat(message);
      await agent.end();
      return { request: server.requests.at(-1), result };
    };

    const empty = await oneCall(space(root.path, 'empty'), false);
    const large = space(root.path, 'large');
    await mkdir(large.memoryDir, { recursive: true });
    const memory = await writeLargeMemory(large.memoryDir, MEMORY_BYTES);
    const course = await oneCall(large, false);
    const naive = await oneCall(space(root.path, 'large'), true);
    const fixedTokens = inputOf(empty.request);
    const indexTokens = tokensOf(memory.indexBytes);
    const value = inputOf(course.request);
    const target = fixedTokens + indexTokens + RETRIEVAL_TOKENS;
    const retrievedBlock =
      (course.request?.body.system as Array<{ text: string }> | undefined)?.[1]?.text ?? '';
    log(
      `  70 KB memory: ${value} input tokens per call (target ≤ ${target} = fixed ${fixedTokens} + MEMORY.md ` +
        `${indexTokens} + 2,000); retrieved ${tokensOf(retrievedBlock.length)} tokens ` +
        `(${course.result.retrievedFacts.length} facts); topic files whole: ${inputOf(naive.request)}`,
    );

    // 2. A 30-turn chat in a small window.
    const chatSpace = space(root.path, 'long');
    await mkdir(chatSpace.memoryDir, { recursive: true });
    let summariserChars = 0;
    let summariserCalls = 0;
    server.setDefault((request) => {
      if (request.system.includes(SUMMARY_MARK)) {
        summariserChars += requestChars(request);
        summariserCalls += 1;
        return { text: `Summary: the user planned a trip, turn by turn. ${'Decisions kept. '.repeat(40)}` };
      }
      return {
        text: `Here is a detailed answer about part ${request.index}. ${'Some useful detail. '.repeat(80)}`,
      };
    });
    const agent = await createMemoryAgent({
      space: chatSpace,
      config: { model, embeddings: undefined, chat: ChatConfig.parse({ contextWindow: 8_192 }) },
      client,
    });
    const at: Record<number, { summariser: number; history: number }> = {};
    for (let turn = 1; turn <= TURNS; turn += 1) {
      await agent.chat(`Turn ${turn}: tell me more about the next stop. ${'Context from me. '.repeat(40)}`);
      if (turn % 10 === 0) {
        const history = agent.history.reduce((sum, entry) => sum + JSON.stringify(entry.content).length, 0);
        at[turn] = { summariser: summariserChars, history };
      }
    }
    await agent.end();
    server.setDefault(undefined);
    const final = at[TURNS]!;
    const ratio = final.summariser / final.history;
    const growth = at[20]!.summariser / Math.max(1, at[10]!.summariser);
    log(
      `  30-turn chat: ${summariserChars} summariser characters in ${summariserCalls} calls, ${final.history} in the history (${ratio.toFixed(2)}×); at 10/20/30 turns: ${at[10]!.summariser}/${at[20]!.summariser}/${final.summariser}`,
    );
    return [
      {
        key: 'chat-input-70kb',
        name: '`dreamd chat` input tokens per call, 70 KB memory',
        value,
        unit: 'tokens',
        target: 'MEMORY.md + ≤ 2,000 retrieved + fixed prompt',
        ratio: value / target,
        ratioOf: '× target',
        met: value <= target,
        details: {
          'MEMORY.md tokens': indexTokens,
          'retrieved tokens': tokensOf(retrievedBlock.length),
          'facts retrieved': course.result.retrievedFacts.length,
          'fixed prompt tokens (empty memory: instructions, tools, message)': fixedTokens,
          'topic files bytes': memory.topicBytes,
          'topic files whole in the prompt (old way), tokens': inputOf(naive.request),
          'cached prefix (cache_control) on the first system block': true,
        },
      },
      {
        key: 'chat-summariser-30-turns',
        name: 'Summariser characters, 30-turn chat (8,192-token window)',
        value: final.summariser,
        unit: 'characters',
        target: 'linear in the turns, ≤ 3× the history',
        ratio,
        ratioOf: '× the history',
        met: ratio <= 3 && growth <= 2.5,
        details: {
          'history characters': final.history,
          'summariser calls': summariserCalls,
          'summariser characters at 10 turns': at[10]!.summariser,
          'summariser characters at 20 turns': at[20]!.summariser,
          'growth 10 → 20 turns': Number(growth.toFixed(2)),
          'old way (issue 14: whole older history each turn)': '310,000 characters in 23 calls',
        },
      },
    ];
  } finally {
    await server.close();
    await root.remove();
  }
}
