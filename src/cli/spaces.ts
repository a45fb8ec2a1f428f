import { resolve } from 'node:path';
import { findSpace, resolvePath } from '../config/load.js';
import type { Config, Space } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { repositoryOf } from '../transcripts/index.js';

/** True when a command's space argument is a folder (a path) rather than a space id. */
function looksLikePath(argument: string): boolean {
  return argument === '.' || argument === '..' || argument.startsWith('~') || argument.includes('/');
}

/**
 * The space a command's argument names: a space id, or the path of a repository (or of a folder in it, or of
 * one of its linked worktrees) that a discovered space serves. A ConfigError (exit 2) when none does.
 */
export function findSpaceOrRepository(config: Config, argument: string | undefined, cwd: string): Space {
  if (
    argument === undefined ||
    !looksLikePath(argument) ||
    config.spaces.some((space) => space.id === argument)
  ) {
    return findSpace(config, argument);
  }
  const folder = resolvePath(argument, resolve(cwd));
  const owner = repositoryOf(folder);
  const root = owner.kind === 'vanished' ? folder : owner.root;
  const space = config.spaces.find((candidate) => candidate.repository === root);
  if (space !== undefined) return space;
  const found = config.spaces.filter((candidate) => candidate.repository !== undefined);
  throw new ConfigError(
    `no space serves the repository ${root}` +
      (owner.kind === 'vanished' ? ` (${owner.detail})` : '') +
      (config.discover === undefined
        ? '; add "discover": ["claude-code", "codex"] to the config to find repositories'
        : found.length === 0
          ? '; discovery found no repository: run `dreamd discover` to see why'
          : `; repositories found: ${found.map((candidate) => candidate.repository).join(', ')}`),
    'space',
  );
}

/**
 * The spaces a command works on: the one named by id or repository path (a ConfigError, exit 2, when none),
 * or every space (configured and discovered) when none is named.
 */
export function selectSpaces(config: Config, id: string | undefined, cwd = process.cwd()): readonly Space[] {
  return id === undefined ? config.spaces : [findSpaceOrRepository(config, id, cwd)];
}
