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

// The agent kit (also `dreamd/agent`).
export {
  createMemoryAgent,
  type ChatResult,
  type MemoryAgent,
  type MemoryAgentOptions,
  runAgent,
  type AgentEvent,
  type RunAgentOptions,
  type RunAgentResult,
  defineTool,
  ToolInputError,
  type AgentTool,
  createMemoryTools,
  type MemoryTools,
  type MemoryToolsOptions,
  createAnthropicMemoryTool,
  loadMemoryContext,
  type MemoryContextOptions,
  createRecall,
  createRecallTool,
  type CreateRecallOptions,
  type Recall,
  type RecallResult,
  clearOldToolResults,
  slidingWindow,
  summariseOlderTurns,
  type Message,
  createAnthropicChatProvider,
  type AnthropicChatProviderOptions,
  type ChatProvider,
  createOpenAIChatProvider,
  type OpenAIChatProviderOptions,
  findSpace,
  type Config,
  type Space,
  type ConfigFile,
  type ModelConfig,
  type GatesConfig,
  type LimitsConfig,
  // Sessions.
  createSessionRecorder,
  type SessionRecorder,
  type SessionRecorderOptions,
  type Session,
  // The typed errors every part throws (see errors.ts).
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
} from './agent-kit.js';
// The service reads its config at once (`dreamd/agent` has an async loadConfig that loads the schema when called).
export { loadConfig } from './config/load.js';
export { createModel } from './model/create-model.js';

// The service.
export { createDreamd, type CreateDreamdOptions, type Dreamd, type DreamdDaemonOptions } from './dreamd.js';
export type { Daemon, DaemonRoles } from './daemon/daemon.js';
export { createLogger } from './daemon/logger.js';
export type { RunRequest, RunSummary, RunProgress, RunOptions } from './core/run.js';
export type { SpaceInspection } from './core/inspection.js';
export type { ModelProvider } from './model/types.js';
export type { TokenUsage } from './core/usage.js';

// Memory.
export { loadMemory, type LoadedMemory } from './space/memory-dir.js';
export { forgetFact } from './space/forget.js';
export { rollbackRun } from './space/rollback.js';
// Approval mode: proposals a person accepts (all or part) or rejects.
export {
  acceptProposal,
  rejectProposal,
  listProposalViews,
  type ProposalView,
  type ProposalChange,
} from './consolidation/approval/proposal.js';
export type { Fact, FactType } from './memory/types.js';

// The errors the functions above throw beyond errors.ts's, so a caller can tell them apart with `instanceof`.
export { AnswerTooLargeError, OutputLimitError } from './model/output.js';
export { ClaudeCodeLockBusyError } from './space/claude-code-lock.js';
export { StorageError } from './space/io-errors.js';
export { StateHijackError } from './space/state-dir.js';
export { RollbackRefusedError } from './space/rollback.js';
export { CommitIncompleteError } from './space/transaction.js';
export { FactNotFoundError, NotDreamdsFactError } from './space/forget.js';
export { ArchiveUnreadableError } from './space/archive.js';
export { BatchResultsUnreadableError, NoBatchApiError } from './errors.js';
export {
  NothingToAcceptError,
  ProposalStaleError,
  UnknownChangeError,
} from './consolidation/approval/proposal.js';
export { ProposalNotFoundError } from './space/proposals.js';
