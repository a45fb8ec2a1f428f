import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { everySpace, noSuchSpace, onlySpace, spaceWithId, type SpaceChoices } from '../config/find-space.js';
import { resolvePath } from '../config/load.js';
import type { Config, Space } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { repositoryOf } from '../transcripts/index.js';
import { claudeProjectNames } from './claude-project-folder.js';
import type { DiscoveredSpaces } from './discovered-spaces.js';

/**
 * The one way a space is named, for every command, the agent kit and `dreamd chat`: by id (configured, then
 * discovered), or by a path (`.`, a repository's root, any folder in it, one of its linked worktrees), which
 * names the space serving that folder's repository (found as discovery finds it, `transcripts/repository-root.ts`):
 * a configured space first, else the space discovery made for it. Discovery runs only when the name is not a
 * configured space's (or no name is given and the command needs every space).
 */

export interface FindSpaceOptions {
  /** The folder a relative path is resolved from; default `process.cwd()`. */
  readonly cwd?: string | undefined;
  /**
   * The discovery of `config.discover`, called at most once and only when needed (the CLI shares one per
   * command); default `discoverSpaces(config)`.
   */
  readonly discover?: (() => Promise<DiscoveredSpaces>) | undefined;
}

/** The spaces named: the one `name` names, or every space, configured and discovered, when it is undefined. */
export async function findSpaces(
  config: Config,
  name: string | undefined,
  options: FindSpaceOptions = {},
): Promise<readonly Space[]> {
  if (name !== undefined) return [await findSpace(config, name, options)];
  return everySpace(await choicesOf(config, options));
}

/**
 * The space `name` names (by id or by path; see above), or, when it is undefined, the only space there is. A
 * ConfigError (exit 2) otherwise, naming what was tried, every configured and discovered space, and the fix.
 */
export async function findSpace(
  config: Config,
  name: string | undefined,
  options: FindSpaceOptions = {},
): Promise<Space> {
  const configured = name === undefined ? undefined : config.spaces.find((space) => space.id === name);
  if (configured !== undefined) return configured;
  const cwd = resolve(options.cwd ?? process.cwd());
  const folder = name === undefined ? undefined : folderNamed(name, cwd);
  const repository = folder === undefined ? undefined : repositoryOf(folder);
  const root = repository?.kind === 'vanished' ? undefined : repository?.root;
  // A configured space serving the repository wins over the discovered one, and needs no discovery.
  const serving = root === undefined ? [] : config.spaces.filter((space) => serves(space, root));
  if (serving.length === 1) return serving[0]!;
  if (serving.length > 1) {
    throw new ConfigError(
      `several configured spaces serve the repository ${root}: ${serving.map((space) => space.id).join(', ')}; ` +
        'name one of them by its id',
      'space',
    );
  }
  const found = config.discover === undefined ? undefined : await discovered(config, options);
  const choices = choicesFrom(config, found);
  if (name === undefined) return onlySpace(choices, config);
  const byId = spaceWithId(choices, name);
  if (byId !== undefined) return byId;
  if (folder === undefined || repository === undefined)
    throw noSuchSpace(`no space "${name}"`, choices, config);
  if (repository.kind === 'vanished') {
    throw noSuchSpace(`no space "${name}", and no folder ${folder} (${repository.detail})`, choices, config);
  }
  const entries = entriesOf(found, repository.root);
  const space = entries.find((entry) => entry.space !== undefined)?.space;
  if (space !== undefined) return space;
  const from = repository.root === folder ? '' : ` (from ${folder})`;
  const why = entries.find((entry) => entry.leftOut !== undefined)?.leftOut;
  throw noSuchSpace(
    why !== undefined
      ? `discovery made no space for the repository ${repository.root}${from}: ${why}`
      : `no space serves the repository ${repository.root}${from}` +
          (found === undefined ? '' : ': no agent session ran in it (`dreamd discover` lists what it found)'),
    choices,
    config,
  );
}

/** Discovery's entries for the repository at `root`, the same folder reached through a symbolic link included. */
function entriesOf(found: DiscoveredSpaces | undefined, root: string): DiscoveredSpaces['spaces'] {
  if (found === undefined) return [];
  const exact = found.spaces.filter((entry) => entry.repository.root === root);
  if (exact.length > 0) return exact;
  const real = realOrSelf(root);
  return found.spaces.filter((entry) => realOrSelf(entry.repository.root) === real);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

async function choicesOf(config: Config, options: FindSpaceOptions): Promise<SpaceChoices> {
  return choicesFrom(config, config.discover === undefined ? undefined : await discovered(config, options));
}

function choicesFrom(config: Config, found: DiscoveredSpaces | undefined): SpaceChoices {
  return {
    configured: config.spaces,
    discovered:
      found === undefined
        ? undefined
        : found.spaces.flatMap((entry) => (entry.space === undefined ? [] : [entry.space])),
  };
}

/** Discovery, loaded when first needed: naming a configured space loads none of it. */
async function discovered(config: Config, options: FindSpaceOptions): Promise<DiscoveredSpaces> {
  if (options.discover !== undefined) return options.discover();
  return (await import('./discovered-spaces.js')).discoverSpaces(config);
}

/**
 * The folder a name stands for, or undefined when it is only an id: `.`, `..`, `~…`, anything with a slash,
 * or a folder of that name in `cwd`.
 */
function folderNamed(name: string, cwd: string): string | undefined {
  const folder = resolvePath(name, cwd);
  if (name === '.' || name === '..' || name.startsWith('~') || name.includes('/') || isAbsolute(name)) {
    return folder;
  }
  try {
    return statSync(folder).isDirectory() ? folder : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when a configured space serves the repository at `root`: it is that repository's discovered space
 * (a config that holds them), a source of it is kept to the repository (`cwd`), it keeps the repository's
 * `AGENTS.md`, it reads or writes Claude Code's project folder of the repository (under either build's name),
 * or its memory folder lies in the repository.
 */
function serves(space: Space, root: string): boolean {
  if (space.repository !== undefined) return space.repository === root;
  const sources = space.sources ?? [{ sessionsDir: space.sessionsDir, format: space.format }];
  if (sources.some((source) => 'repository' in source && source.repository === root)) return true;
  if (space.agentsMd === join(root, 'AGENTS.md')) return true;
  const names = claudeProjectNames(root);
  if (basename(space.memoryDir) === 'memory' && names.includes(basename(dirname(space.memoryDir))))
    return true;
  if (
    sources.some((source) => source.format === 'claude-code' && names.includes(basename(source.sessionsDir)))
  ) {
    return true;
  }
  return isInside(space.memoryDir, root);
}

function isInside(path: string, folder: string): boolean {
  const inside = relative(folder, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}
