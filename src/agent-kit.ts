/**
 * The agent kit, importable alone as `dreamd/agent`: an agent with memory (`createMemoryAgent`), the agent loop
 * (`runAgent`, `defineTool`), the memory tools, recall, memory loading, keeping a conversation inside the context
 * window, chat providers, and the session recorder that writes the transcripts consolidation reads.
 *
 * Importing it loads this file, the context functions, the tool helpers, the errors and the provider table:
 * no daemon, queue, HTTP server or consolidation code, no model SDK and no schema library. Each function below
 * loads what it needs at its first use (an async function when called, a tool when it first runs, a provider
 * at its first call), so an agent process pays for what it uses (`npm run bench` reports the import's time and
 * memory against the Anthropic SDK's alone). Everything here is also exported by the package's main entry.
 */
import type * as AnthropicMemoryToolModule from './agent/anthropic-memory-tool.js';
import type { MemoryContextOptions } from './agent/backfill.js';
import type { ChatResult, MemoryAgent, MemoryAgentOptions } from './agent/memory-agent.js';
import type { MemoryTools, MemoryToolsOptions } from './agent/memory-tools.js';
import type { CreateRecallOptions, Recall, RecallQueryOptions } from './agent/recall.js';
import type { RunAgentOptions, RunAgentResult } from './agent/run-agent.js';
import type { SessionPassages, SessionPassagesOptions } from './agent/session-passages.js';
import type { TranscriptPassageSource, TranscriptPassagesOptions } from './agent/transcript-passages.js';
import {
  ANTHROPIC_MEMORY,
  FORGET_MEMORY,
  READ_MEMORY,
  RECALL,
  WRITE_MEMORY,
} from './agent/tool-definitions.js';
import type { AgentTool } from './agent/tool.js';
import type { Config, Space } from './config/schema.js';
import type { FindSpaceOptions } from './discovery/resolve-space.js';
import type { LoadConfigOptions } from './config/load.js';
import type { SessionRecorder, SessionRecorderOptions } from './transcripts/session-recorder.js';

/** `load` once, at the first call; a failed load is tried again at the next call. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/** A tool offered by its definition at once, whose code loads when the model first calls it. */
function deferredTool(definition: AgentTool['definition'], load: () => Promise<AgentTool>): AgentTool {
  return { definition, handler: async (input, context) => (await load()).handler(input, context) };
}

// The agent kit.
export type { ChatResult, MemoryAgent, MemoryAgentOptions };

/** See `createMemoryAgent` in `agent/memory-agent.ts`: the agent of one space, loaded at this call. */
export async function createMemoryAgent(options: MemoryAgentOptions): Promise<MemoryAgent> {
  return (await import('./agent/memory-agent.js')).createMemoryAgent(options);
}

export type { AgentEvent, RunAgentOptions, RunAgentResult } from './agent/run-agent.js';

/** See `runAgent` in `agent/run-agent.ts`: one user turn of the agent loop, loaded at this call. */
export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  return (await import('./agent/run-agent.js')).runAgent(options);
}

export { defineTool, ToolInputError, type AgentTool, type ToolCallContext } from './agent/tool.js';
export type { MemoryTools, MemoryToolsOptions };

/**
 * `read_memory`, `write_memory` and `forget_memory` over one space's memory directory (see
 * `agent/memory-tools.ts`); their definitions are ready at once, their code loads at the first call.
 */
export function createMemoryTools(options: MemoryToolsOptions): MemoryTools {
  const tools = once(async () => (await import('./agent/memory-tools.js')).createMemoryTools(options));
  const readMemory = deferredTool(READ_MEMORY, async () => (await tools()).readMemory);
  const writeMemory = deferredTool(WRITE_MEMORY, async () => (await tools()).writeMemory);
  const forgetMemory = deferredTool(FORGET_MEMORY, async () => (await tools()).forgetMemory);
  return { readMemory, writeMemory, forgetMemory, tools: [readMemory, writeMemory, forgetMemory] };
}

/** Anthropic's memory tool over one space (see `agent/anthropic-memory-tool.ts`), loaded at its first call. */
export function createAnthropicMemoryTool(
  ...args: Parameters<typeof AnthropicMemoryToolModule.createAnthropicMemoryTool>
): AgentTool {
  return deferredTool(
    ANTHROPIC_MEMORY,
    once(async () => (await import('./agent/anthropic-memory-tool.js')).createAnthropicMemoryTool(...args)),
  );
}

export type { MemoryContextOptions };

/** See `loadMemoryContext` in `agent/backfill.ts`. */
export async function loadMemoryContext(memoryDir: string, options?: MemoryContextOptions): Promise<string> {
  return (await import('./agent/backfill.js')).loadMemoryContext(memoryDir, options);
}

export type { CreateRecallOptions, Recall, RecallAnswer, RecallResult } from './agent/recall.js';

/** Recall over one space's facts (see `agent/recall.ts`), loaded at its first query. */
export function createRecall(options: CreateRecallOptions): Recall {
  const recall = once(async () => (await import('./agent/recall.js')).createRecall(options));
  return {
    mode: options.embeddings === undefined ? 'lexical' : 'embeddings',
    recall: async (query, queryOptions) => (await recall()).recall(query, queryOptions),
    search: async (query, queryOptions) => {
      const loaded = await recall();
      return loaded.search === undefined
        ? { results: await loaded.recall(query, queryOptions), tokens: 0 }
        : loaded.search(query, queryOptions);
    },
  };
}

/** The `recall` tool over `recall` (see `agent/recall.ts`), loaded at its first call. */
export function createRecallTool(recall: Recall, defaults?: RecallQueryOptions): AgentTool {
  return deferredTool(
    RECALL,
    once(async () => (await import('./agent/recall.js')).createRecallTool(recall, defaults)),
  );
}

export type { SessionPassages, TranscriptPassageSource };

/**
 * The passages of a space's transcripts for fused recall (see `agent/transcript-passages.ts`), loaded at the
 * first read: pass it as `createRecall`'s `transcripts`.
 */
export function createTranscriptPassages(options: TranscriptPassagesOptions): TranscriptPassageSource {
  const passages = once(async () =>
    (await import('./agent/transcript-passages.js')).createTranscriptPassages(options),
  );
  return async () => (await passages())();
}

/** The passages of a space's recorded sessions (see `agent/session-passages.ts`), loaded at the first read. */
export function createSessionPassages(options: SessionPassagesOptions): SessionPassages {
  const passages = once(async () =>
    (await import('./agent/session-passages.js')).createSessionPassages(options),
  );
  return async () => (await passages())();
}

export { clearOldToolResults, slidingWindow, summariseOlderTurns, type Message } from './agent/context.js';
export {
  createAnthropicChatProvider,
  createOpenAIChatProvider,
  type AnthropicChatProviderOptions,
  type OpenAIChatProviderOptions,
} from './model/chat-providers.js';
export type { ChatProvider, ModelProvider } from './model/types.js';

// The config an agent with memory reads (the same `dreamd.config.json` as the daemon).
export type { Config, Space, ConfigFile, ModelConfig, GatesConfig, LimitsConfig } from './config/schema.js';

/** See `loadConfig` in `config/load.ts`: the parsed `dreamd.config.json`, loaded at this call. */
export async function loadConfig(options?: LoadConfigOptions): Promise<Config> {
  return (await import('./config/load.js')).loadConfig(options);
}

/**
 * See `findSpace` in `discovery/resolve-space.ts`, loaded at this call: the space a name names, by id or by a
 * folder of its repository (`.`, a subfolder, a worktree), the spaces `discover` finds included (a configured
 * one first); with no name, the only space. A ConfigError naming every space and the fix when none matches.
 */
export async function findSpace(
  config: Config,
  name: string | undefined,
  options?: FindSpaceOptions,
): Promise<Space> {
  return (await import('./discovery/resolve-space.js')).findSpace(config, name, options);
}

// Sessions.
export type { SessionRecorder, SessionRecorderOptions };

/** See `createSessionRecorder` in `transcripts/session-recorder.ts`, loaded at this call. */
export async function createSessionRecorder(options: SessionRecorderOptions): Promise<SessionRecorder> {
  return (await import('./transcripts/session-recorder.js')).createSessionRecorder(options);
}
export type { Session } from './transcripts/types.js';

// The typed errors every part throws, each named: `instanceof` one, or read `exitCode`, `retryable`, `status`.
export {
  DreamdError,
  ConfigError,
  TranscriptError,
  TranscriptErrorReason,
  MemoryFormatError,
  ModelError,
  ModelErrorKind,
  LockBusyError,
  LockLostError,
  PathEscapeError,
  errorMessage,
} from './errors.js';
