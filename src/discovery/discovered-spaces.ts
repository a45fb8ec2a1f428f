import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { Config, DiscoverSettings, Space } from '../config/schema.js';
import {
  discoverRepositories,
  memoryFolderOf,
  type Discovery,
  type DiscoveryCache,
  type DiscoveredRepository,
} from './discover.js';

/**
 * From discovery to spaces: one space per repository, every agent's folders of it as its sources, Claude
 * Code's memory folder of the repository as its memory (the `claude-code` layout), and, when `discover` asks
 * for it, the repository's `AGENTS.md`. Configured spaces come first: a repository whose memory folder or
 * transcripts a configured space already has is left to that space, and said so in `notes`.
 */

/** A discovered repository as a space, or why it is not one. */
export interface DiscoveredSpace {
  readonly repository: DiscoveredRepository;
  /** The space, unless `leftOut` says why there is none. */
  readonly space?: Space | undefined;
  /** The memory folder it feeds (or would). */
  readonly memoryDir: string;
  readonly leftOut?: string | undefined;
}

/**
 * Repositories whose paths Claude Code encodes to one project folder (`/x/a-b` and `/x/a_b` are both
 * `-x-a-b`), so one memory folder. dreamd writes nothing there until a person names its owner in
 * `discover.owners`; then only the owner's space writes it, reading only its own transcripts.
 */
export interface FolderCollision {
  /** The shared Claude Code project folder. */
  readonly folder: string;
  /** The repositories whose memory it would be, sorted. */
  readonly repositories: readonly string[];
  /** The repository `discover.owners` gives it, when it is one of them; null: undecided. */
  readonly owner: string | null;
  /** What happened and how a person decides. */
  readonly message: string;
}

export interface DiscoveredSpaces {
  readonly discovery: Discovery;
  readonly spaces: readonly DiscoveredSpace[];
  /** Project folders several repositories would share, each named with how to decide. */
  readonly collisions: readonly FolderCollision[];
  /** Things worth knowing that are not errors (a repository nested inside another). */
  readonly notes: readonly string[];
}

/**
 * A space id for a repository: its folder's name (letters, digits, `.`, `_`, `-`; at most 40) and 8 hex digits
 * of the root's hash, so two repositories of one name differ and a repository keeps its id between passes.
 */
export function discoveredSpaceId(root: string): string {
  const name = basename(root)
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return name === '' ? `repo-${hash}` : `${name}-${hash}`;
}

/** The spaces of a discovery, checked against the configured spaces. Pure. */
export function spacesOfDiscovery(
  discovery: Discovery,
  settings: DiscoverSettings,
  configured: readonly Space[],
): DiscoveredSpaces {
  const memoryOwners = new Map(configured.map((space) => [space.memoryDir, space.id]));
  const ids = new Set(configured.map((space) => space.id));
  // Folders configured spaces read: whole (key the folder), or one repository's part of it (folder and root).
  const folderOwners = new Map<string, string>();
  for (const space of configured) {
    for (const source of space.sources ?? [{ sessionsDir: space.sessionsDir, repository: undefined }]) {
      folderOwners.set(ownerKey(source.sessionsDir, source.repository), space.id);
    }
  }
  const ownerOf = (sessionsDir: string, root: string): string | undefined =>
    folderOwners.get(ownerKey(sessionsDir, undefined)) ?? folderOwners.get(ownerKey(sessionsDir, root));
  const notes: string[] = [...discovery.notes];
  const memoryDirs = new Map(
    discovery.repositories.map((repository) => [
      repository.root,
      memoryFolderOf(discovery, settings, repository.root),
    ]),
  );
  const collisions = collisionsOf(memoryDirs, settings, memoryOwners);
  const collisionOf = new Map(
    collisions.flatMap((collision) => collision.repositories.map((root) => [root, collision] as const)),
  );
  const spaces = discovery.repositories.map((repository): DiscoveredSpace => {
    const memoryDir = memoryDirs.get(repository.root)!;
    const id = discoveredSpaceId(repository.root);
    const memoryOwner = memoryOwners.get(memoryDir);
    if (memoryOwner !== undefined) {
      return {
        repository,
        memoryDir,
        leftOut: `the configured space "${memoryOwner}" already writes ${memoryDir}`,
      };
    }
    const collision = collisionOf.get(repository.root);
    if (collision !== undefined && collision.owner !== repository.root) {
      const others = collision.repositories.filter((root) => root !== repository.root);
      return {
        repository,
        memoryDir,
        leftOut:
          collision.owner === null
            ? `shares ${collision.folder} with ${others.join(', ')}: Claude Code names their paths alike, and ` +
              'dreamd writes nothing there until you name its owner (see the collision)'
            : `the folder ${collision.folder} belongs to ${collision.owner} (discover.owners); this ` +
              "repository's sessions are not consolidated (Claude Code would read its memory from that folder)",
      };
    }
    if (ids.has(id)) {
      return { repository, memoryDir, leftOut: `a configured space already has the id "${id}"; rename it` };
    }
    const sources = repository.sources.filter((source) => {
      const owner = ownerOf(source.sessionsDir, repository.root);
      if (owner === undefined) return true;
      notes.push(
        `${source.sessionsDir} is read by the configured space "${owner}", so ${repository.root}'s space does ` +
          'not read it too',
      );
      return false;
    });
    if (sources.length === 0) {
      return { repository, memoryDir, leftOut: 'configured spaces already read all of its transcripts' };
    }
    const first = sources[0]!;
    const space: Space = {
      id,
      sessionsDir: first.sessionsDir,
      format: first.format,
      sources: sources.map((source) => ({
        format: source.format,
        sessionsDir: source.sessionsDir,
        ...(source.files === undefined ? {} : { files: source.files }),
      })),
      memoryDir,
      layout: 'claude-code',
      repository: repository.root,
      ...(settings.agentsMd && repository.kind === 'repository'
        ? { agentsMd: join(repository.root, 'AGENTS.md') }
        : {}),
    };
    ids.add(id);
    return { repository, memoryDir, space };
  });
  // Each root's parents looked up among the roots: a few lookups a root, where comparing every pair grows as the square.
  const roots = new Set(discovery.repositories.map((repository) => repository.root));
  for (const inner of discovery.repositories) {
    const outer = enclosingRoot(inner.root, roots);
    if (outer !== undefined) {
      notes.push(
        `${inner.root} is a repository of its own inside ${outer}: its sessions feed its own memory, ` +
          `not ${outer}'s (work from ${outer} to share one memory)`,
      );
    }
  }
  return { discovery, spaces, collisions, notes };
}

/** Memory folders more than one repository maps to, unless a configured space already writes them. */
function collisionsOf(
  memoryDirs: ReadonlyMap<string, string>,
  settings: DiscoverSettings,
  memoryOwners: ReadonlyMap<string, string>,
): FolderCollision[] {
  const byFolder = new Map<string, string[]>();
  for (const [root, memoryDir] of memoryDirs) {
    if (memoryOwners.has(memoryDir)) continue; // a configured space decided: it writes the folder
    const roots = byFolder.get(memoryDir) ?? [];
    roots.push(root);
    byFolder.set(memoryDir, roots);
  }
  const collisions: FolderCollision[] = [];
  for (const [memoryDir, roots] of byFolder) {
    if (roots.length < 2) continue;
    const repositories = [...roots].sort();
    const folder = dirname(memoryDir);
    const name = basename(folder);
    const named = settings.owners?.[name];
    const owner = named !== undefined && repositories.includes(named) ? named : null;
    const list = `${repositories.slice(0, -1).join(', ')} and ${repositories.at(-1)!}`;
    const head = `${folder} is the Claude Code folder of ${list} (Claude Code names each of their paths ${name})`;
    const message =
      owner !== null
        ? `${head}: it belongs to ${owner} (discover.owners); the others' sessions are not consolidated`
        : `${head}: dreamd writes nothing there until you choose: add "owners": { "${name}": "<one of them>" } ` +
          'to "discover" in dreamd.config.json, or configure a space that writes it' +
          (named === undefined ? '' : `; discover.owners names ${named} for it, which is none of them`);
    collisions.push({ folder, repositories, owner, message });
  }
  return collisions.sort((left, right) => (left.folder < right.folder ? -1 : 1));
}

/** The nearest folder above `root` that is one of `roots`, or undefined. */
function enclosingRoot(root: string, roots: ReadonlySet<string>): string | undefined {
  for (let folder = dirname(root); folder !== dirname(folder); folder = dirname(folder)) {
    if (roots.has(folder)) return folder;
  }
  return roots.has('/') && root !== '/' ? '/' : undefined;
}

function ownerKey(sessionsDir: string, repository: string | undefined): string {
  return `${sessionsDir}\0${repository ?? ''}`;
}

/** Discovers and returns the spaces of `config.discover` (none when it is unset). */
export async function discoverSpaces(config: Config, cache?: DiscoveryCache): Promise<DiscoveredSpaces> {
  if (config.discover === undefined) {
    return {
      discovery: { homes: [], repositories: [], skipped: [], claudeProjectFolders: [], notes: [] },
      spaces: [],
      collisions: [],
      notes: [],
    };
  }
  const discovery = await discoverRepositories({ settings: config.discover, cache });
  return spacesOfDiscovery(discovery, config.discover, config.spaces);
}

/**
 * The config with its discovered spaces after the configured ones. Without `discover`, the config itself. A
 * config without a file and without `spaces` has the `default` space; with `discover` set that stays.
 */
export async function withDiscoveredSpaces(config: Config, cache?: DiscoveryCache): Promise<Config> {
  if (config.discover === undefined) return config;
  return configWithSpaces(config, await discoverSpaces(config, cache));
}

/** The config with the spaces of a discovery made from it after the configured ones. */
export function configWithSpaces(config: Config, found: DiscoveredSpaces): Config {
  const extra = found.spaces.flatMap((entry) => (entry.space === undefined ? [] : [entry.space]));
  return extra.length === 0 ? config : { ...config, spaces: [...config.spaces, ...extra] };
}
