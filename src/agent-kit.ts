/**
 * The agent kit, importable alone as `dreamd/agent`: an agent with memory (`createMemoryAgent`), the agent loop
 * (`runAgent`, `defineTool`), the memory tools, recall, memory loading, keeping a conversation inside the context
 * window, chat providers, and the session recorder that writes the transcripts consolidation reads.
 *
 * It loads neither the daemon, Redis, the HTTP server nor the scheduler, and the model SDKs only when an agent
 * first talks to a model: an agent process pays for what it uses (`npm run bench` reports the import's time and
 * memory against the Anthropic SDK's alone). Everything here is also exported by the package's main entry.
 */

// The agent kit.
export {
  createMemoryAgent,
  type ChatResult,
  type MemoryAgent,
  type MemoryAgentOptions,
} from './agent/memory-agent.js';
export { runAgent, type AgentEvent, type RunAgentOptions, type RunAgentResult } from './agent/run-agent.js';
export { defineTool, ToolInputError, type AgentTool, type ToolCallContext } from './agent/tool.js';
export { createMemoryTools, type MemoryTools, type MemoryToolsOptions } from './agent/memory-tools.js';
export { createAnthropicMemoryTool } from './agent/anthropic-memory-tool.js';
export { loadMemoryContext, type MemoryContextOptions } from './agent/backfill.js';
export {
  createRecall,
  createRecallTool,
  type CreateRecallOptions,
  type Recall,
  type RecallResult,
} from './agent/recall.js';
export { createSessionPassages, type SessionPassages } from './agent/session-passages.js';
export { clearOldToolResults, slidingWindow, summariseOlderTurns, type Message } from './agent/context.js';
export {
  createAnthropicChatProvider,
  createOpenAIChatProvider,
  type AnthropicChatProviderOptions,
  type OpenAIChatProviderOptions,
} from './model/chat-providers.js';
export { createModel } from './model/create-model.js';
export type { ChatProvider, ModelProvider } from './model/types.js';

// The config an agent with memory reads (the same `dreamd.config.json` as the daemon).
export { loadConfig, findSpace } from './config/load.js';
export type { Config, Space, ConfigFile, ModelConfig, GatesConfig, LimitsConfig } from './config/schema.js';

// Sessions.
export {
  createSessionRecorder,
  type SessionRecorder,
  type SessionRecorderOptions,
} from './transcripts/session-recorder.js';
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
