/**
 * dreamd as a library: the consolidation pipeline, the daemon, the memory and transcript formats, the model
 * layer, and the agent side (record, remember, recall, stay inside the context window).
 */
export * from './errors.js';
export {
  loadConfig,
  findSpace,
  resolvePath,
  ENVIRONMENT_VARIABLES,
  CONFIG_FILE_NAME,
} from './config/load.js';
export type {
  Config,
  Space,
  ConfigFile,
  ModelConfig,
  EmbeddingsConfig,
  GatesConfig,
  LimitsConfig,
} from './config/schema.js';
export { createConsolidator, type ConsolidatorOptions, type RunStep } from './consolidation/run.js';
export { createInspectSpace, inspectSpaceDetailed } from './consolidation/inspect.js';
export type * from './core/run.js';
export { createDaemon, type Daemon, type CreateDaemonOptions, type DaemonRoles } from './daemon/daemon.js';
export { evaluateGates } from './core/gates.js';
export type { SpaceInspection } from './core/inspection.js';
export { createLogger } from './daemon/logger.js';
export * from './transcripts/index.js';
export * from './memory/index.js';
export * from './model/index.js';
export * from './digest/index.js';
export * from './agent/index.js';
