/**
 * dreamd as a library: what users import, by name. Everything else under src/ is internal and may change
 * between versions (the layers are described in ARCHITECTURE.md).
 *
 * - The agent kit: an agent with memory (`createMemoryAgent`), the agent loop (`runAgent`, `defineTool`), the
 *   memory tools, recall, memory loading, keeping a conversation inside the context window, chat providers.
 * - Sessions: the recorder that writes the transcripts consolidation reads.
 * - The service: `loadConfig` and `createDreamd`, the composition root the CLI itself is built on.
 * - Memory: reading it, forgetting a fact, undoing a run.
 * - The typed errors every part throws.
 */

// The agent kit.
export {
  createMemoryAgent,
  type ChatResult,
  type MemoryAgent,
  type MemoryAgentOptions,
} from './agent/memory-agent.js';
export { runAgent, type AgentEvent, type RunAgentOptions, type RunAgentResult } from './agent/run-agent.js';
export { defineTool, ToolInputError, type AgentTool } from './agent/tool.js';
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
export { clearOldToolResults, slidingWindow, summariseOlderTurns, type Message } from './agent/context.js';
export {
  createAnthropicChatProvider,
  type AnthropicChatProviderOptions,
  type ChatProvider,
} from './agent/chat-provider.js';
export { createOpenAIChatProvider, type OpenAIChatProviderOptions } from './agent/openai-chat-provider.js';

// Sessions.
export {
  createSessionRecorder,
  type SessionRecorder,
  type SessionRecorderOptions,
} from './transcripts/session-recorder.js';
export type { Session } from './transcripts/types.js';

// The service.
export { loadConfig, findSpace } from './config/load.js';
export type { Config, Space, ConfigFile, ModelConfig, GatesConfig, LimitsConfig } from './config/schema.js';
export { createDreamd, type CreateDreamdOptions, type Dreamd, type DreamdDaemonOptions } from './dreamd.js';
export type { Daemon, DaemonRoles } from './daemon/daemon.js';
export { createLogger } from './daemon/logger.js';
export type { RunRequest, RunSummary, RunProgress, RunOptions } from './core/run.js';
export type { SpaceInspection } from './core/inspection.js';
export type { ModelProvider } from './model/types.js';
export type { TokenUsage } from './core/usage.js';

// Memory.
export { loadMemory, type LoadedMemory } from './memory/memory-dir.js';
export { forgetFact } from './memory/forget.js';
export { rollbackRun } from './memory/rollback.js';
export type { Fact, FactType } from './memory/types.js';

// Errors.
export * from './errors.js';
