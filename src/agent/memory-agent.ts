import { mkdir } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import type { Config, Space } from '../config/schema.js';
import { ConfigError, ModelError } from '../errors.js';
import type { FactType } from '../memory/types.js';
import type { ModelProvider } from '../model/types.js';
import { createSessionRecorder, type SessionRecorder } from '../transcripts/session-recorder.js';
import { createAnthropicMemoryTool } from './anthropic-memory-tool.js';
import { loadMemoryContext } from './backfill.js';
import type { Message } from './context.js';
import { createMemoryTools } from './memory-tools.js';
import { createRecall, createRecallTool } from './recall.js';
import { runAgent, type AgentEvent, type RunAgentResult } from './run-agent.js';
import type { AgentTool } from './tool.js';

/**
 * A small agent with memory for one space: the wiring of backfill, memory tools, recall and the session
 * recorder around `runAgent`. `dreamd chat "…" [--space]` is one `chat` call followed by `end`.
 *
 * States: open (recorder created, memory loaded into the system prompt) → open (each `chat` adds a user
 * turn to the same session) → ended (`end` wrote `endedAt`; `chat` refuses).
 */

/** Context budget of a chat by default, in tokens: compaction's own trigger (150K) on a 200K window. */
export const DEFAULT_CHAT_CONTEXT_BUDGET = 150_000;
/** Name stored as the session's `agent`. */
export const CHAT_AGENT_NAME = 'dreamd-chat';

export interface MemoryAgentOptions {
  readonly space: Space;
  /** The parsed config: the model (Anthropic provider) and, when set, the embeddings endpoint for recall. */
  readonly config: Pick<Config, 'model' | 'embeddings'>;
  /** SDK client to use instead of one built from `config.model` (tests, custom transports). */
  readonly client?: Anthropic;
  /** Topic files placed in the system prompt next to the index. Default true (all four). */
  readonly includeTopics?: boolean | readonly FactType[];
  /** Also offer Anthropic's `memory_20250818` tool over the same directory. Default false. */
  readonly anthropicMemoryTool?: boolean;
  /** Most model calls per `chat`. Default 10. */
  readonly maxTurns?: number;
  /** Token budget of one request. Default 150,000. */
  readonly contextBudget?: number;
  /** Small model that summarises old turns when over budget. Default none (old turns are dropped). */
  readonly summariser?: ModelProvider;
  /** Session id (file stem in the sessions directory). Default: start time + random suffix. */
  readonly sessionId?: string;
  readonly now?: () => Date;
  readonly onEvent?: (event: AgentEvent) => void;
}

export interface ChatResult extends RunAgentResult {
  readonly sessionId: string;
  /** The session transcript, in the space's sessions directory. */
  readonly sessionFile: string;
}

export interface MemoryAgent {
  readonly space: Space;
  /** The system prompt of this session, memory included (fixed at creation). */
  readonly system: string;
  readonly sessionId: string;
  readonly sessionFile: string;
  /** Sends one user message and runs the loop until the model answers. */
  chat(prompt: string, options?: { signal?: AbortSignal }): Promise<ChatResult>;
  /** Ends the recorded session. Calling it again changes nothing. */
  end(): Promise<void>;
}

function instructions(space: Space, today: string): string {
  return [
    `You are a helpful assistant with long-term memory. Today is ${today}. Memory space: "${space.id}".`,
    'Your memory from earlier sessions is below, inside <memory-context>; use it when it helps, say when you ' +
      'rely on it, and prefer what the user says now when the two disagree.',
    'Use `recall` to search memory when the user refers to the past or asks for advice that may depend on ' +
      'their preferences. When the user tells you something worth keeping (a preference, a correction, a ' +
      'project decision, a reference), save it with `write_memory`; remove a note with `forget_memory` when ' +
      'asked. Never save secrets or the state of the current task.',
  ].join('\n');
}

function clientFrom(config: MemoryAgentOptions['config']): Anthropic {
  const model = config.model;
  if (model.provider !== 'anthropic') {
    throw new ConfigError(
      `dreamd chat runs on the Anthropic Messages API; model.provider is "${model.provider}". Set model.provider to "anthropic".`,
      'model.provider',
    );
  }
  if (model.apiKey === undefined) {
    throw new ModelError(
      'No Anthropic API key: set ANTHROPIC_API_KEY (or DREAMD_MODEL_API_KEY, or model.apiKey).',
      {
        retryable: false,
        kind: 'missing-credentials',
      },
    );
  }
  return new Anthropic({
    apiKey: model.apiKey,
    ...(model.baseUrl === undefined ? {} : { baseURL: model.baseUrl }),
    timeout: model.timeoutMs,
    maxRetries: model.maxRetries,
  });
}

/**
 * Creates the memory agent of one space: loads its memory into the system prompt (backfill), offers
 * `read_memory`, `write_memory`, `forget_memory` and `recall` (plus Anthropic's memory tool when asked), and
 * records the session in the space's sessions directory, where dreamd will consolidate it.
 */
export async function createMemoryAgent(options: MemoryAgentOptions): Promise<MemoryAgent> {
  const { space, config } = options;
  const client = options.client ?? clientFrom(config);
  const now = options.now ?? (() => new Date());
  await mkdir(space.memoryDir, { recursive: true });

  const memoryContext = await loadMemoryContext(space.memoryDir, {
    includeTopics: options.includeTopics ?? true,
  });
  const system = [instructions(space, now().toISOString().slice(0, 10)), memoryContext]
    .filter(Boolean)
    .join('\n\n');

  const memoryTools = createMemoryTools({ memoryDir: space.memoryDir, now });
  const recall = createRecall({ memoryDir: space.memoryDir, embeddings: config.embeddings });
  const tools: AgentTool[] = [...memoryTools.tools, createRecallTool(recall)];
  if (options.anthropicMemoryTool === true)
    tools.push(createAnthropicMemoryTool({ memoryDir: space.memoryDir }));

  const recorder: SessionRecorder = await createSessionRecorder({
    sessionsDir: space.sessionsDir,
    id: options.sessionId,
    agent: CHAT_AGENT_NAME,
    now,
  });
  // Everything recorded so far, in order: the next chat continues from it, also after a failed run.
  const history: Message[] = [];
  const recordingHistory: Pick<SessionRecorder, 'append'> = {
    async append(message) {
      await recorder.append(message);
      // runAgent only records the Anthropic-shaped messages it holds, so this is the same object back.
      history.push(message as Message);
    },
  };
  let ended = false;

  return {
    space,
    system,
    sessionId: recorder.id,
    sessionFile: recorder.file,
    async chat(prompt, chatOptions = {}) {
      if (ended) throw new ConfigError(`session ${recorder.id} has ended; create a new agent to chat again`);
      const recordFrom = history.length;
      const result = await runAgent({
        client,
        model: config.model.name,
        system,
        messages: [...history, { role: 'user', content: prompt }],
        tools,
        maxTokens: config.model.maxOutputTokens,
        recorder: recordingHistory,
        recordFrom,
        contextBudget: options.contextBudget ?? DEFAULT_CHAT_CONTEXT_BUDGET,
        ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
        ...(options.summariser === undefined ? {} : { summariser: options.summariser }),
        ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
        ...(chatOptions.signal === undefined ? {} : { signal: chatOptions.signal }),
      });
      return { ...result, sessionId: recorder.id, sessionFile: recorder.file };
    },
    async end() {
      ended = true;
      await recorder.end();
    },
  };
}
