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

// The agent kit and sessions (also `dreamd/agent`), and the typed errors every part throws.
export * from './agent-kit.js';

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
export type { Fact, FactType } from './memory/types.js';
