/** Discovery: the repositories the coding agents worked in, and one space per repository. */
export { discoverRepositories, createDiscoveryCache, memoryFolderOf, SkipReason } from './discover.js';
export type {
  Discovery,
  DiscoveryCache,
  DiscoverOptions,
  DiscoveredHome,
  DiscoveredRepository,
  DiscoveredSource,
  DiscoverySkip,
} from './discover.js';
export {
  configWithSpaces,
  discoverSpaces,
  discoveredSpaceId,
  spacesOfDiscovery,
  withDiscoveredSpaces,
} from './discovered-spaces.js';
export type { DiscoveredSpace, DiscoveredSpaces, FolderCollision } from './discovered-spaces.js';
export {
  claudeMemoryFolder,
  claudeNativeProjectName,
  claudeProjectName,
  claudeProjectNames,
  djb2,
  isClaudeProjectNameOf,
  wyhash,
} from './claude-project-folder.js';
export { findSpace, findSpaces, type FindSpaceOptions } from './resolve-space.js';
