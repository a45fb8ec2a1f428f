import { lstatSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { DiscoverAgent, DiscoverSettings, TranscriptFormat } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { readWorkingDirectorySync, repositoryOf, type RepositoryOf } from '../transcripts/index.js';
import { claudeMemoryFolder, claudeProjectName, isClaudeProjectNameOf } from './claude-project-folder.js';

/**
 * Discovery: the repositories the coding agents worked in, found in the agents' own homes, each with every
 * agent's transcripts of it. Pure listing and reading of transcript heads; nothing is written.
 *
 * - Claude Code keeps one folder per working directory under `<claudeHome>/projects/` (named by
 *   `claudeProjectName`), its sessions `*.jsonl` inside. Each transcript's working directory is read once from
 *   its head (the `cwd` of its lines) and kept in the cache. A transcript belongs to the folder when the folder's
 *   name is exactly what Claude Code names its working directory, or a folder above it in the same repository
 *   (a session that ran in a subfolder); any other is foreign, skipped with a note, never given to the
 *   folder's repository. A folder whose sessions went to several repositories is read file by file.
 * - Codex keeps every repository's rollouts together, `<codexHome>/sessions/YYYY/MM/DD/rollout-*.jsonl`, each
 *   naming its working directory on its first line (`session_meta.payload.cwd`), read once per file.
 * - Each working directory resolves to its repository (`transcripts/repository-root.ts`): a linked worktree
 *   and a subfolder join their main worktree's repository; a folder outside git is its own.
 *
 * Bad input is named with its fix in `skipped` and never stops the rest: an unreadable folder, a transcript
 * without a working directory, a working directory that no longer exists (its sessions are never merged into
 * another repository's memory), a project folder Claude Code would not have named so, a transcript that ran
 * elsewhere than its folder says.
 */

/** One agent's home, as discovery found it. */
export interface DiscoveredHome {
  readonly agent: DiscoverAgent;
  readonly path: string;
  /** The folder discovery lists in it (`projects/` or `sessions/`). */
  readonly folder: string;
  readonly found: boolean;
  /** Where the home leads when it is a symbolic link (followed). */
  readonly linkedTo?: string | undefined;
}

/** One folder of one agent's transcripts of a repository. */
export interface DiscoveredSource {
  readonly agent: DiscoverAgent;
  readonly format: TranscriptFormat;
  readonly sessionsDir: string;
  /** The working directory the sessions ran in (Claude Code: the folder's; Codex: every distinct one). */
  readonly workingDirectories: readonly string[];
  /** Codex: the rollouts of this repository, relative to `sessionsDir`. Claude Code: absent (the whole folder). */
  readonly files?: readonly string[] | undefined;
  /** Transcripts found. */
  readonly sessions: number;
}

export interface DiscoveredRepository {
  /** The repository's root (a linked worktree's main worktree), or the folder itself outside git. */
  readonly root: string;
  readonly kind: 'repository' | 'folder';
  /** Linked worktrees whose sessions were found, each feeding this repository's memory. */
  readonly worktrees: readonly string[];
  readonly sources: readonly DiscoveredSource[];
}

export const SkipReason = {
  homeMissing: 'home-missing',
  unreadable: 'unreadable',
  noWorkingDirectory: 'no-working-directory',
  vanished: 'vanished',
  renamedFolder: 'renamed-folder',
  foreignTranscript: 'foreign-transcript',
  notATranscript: 'not-a-transcript',
} as const;
export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];

/** One thing discovery did not use, with why and what to do. */
export interface DiscoverySkip {
  readonly path: string;
  readonly reason: SkipReason;
  /** What is wrong and the fix, in one sentence. */
  readonly message: string;
}

export interface Discovery {
  readonly homes: readonly DiscoveredHome[];
  /** Sorted by root. */
  readonly repositories: readonly DiscoveredRepository[];
  readonly skipped: readonly DiscoverySkip[];
  /** The names under Claude Code's `projects/` (a long root's memory folder is matched against them). */
  readonly claudeProjectFolders: readonly string[];
  /** Things worth knowing that are not skips (a `.git` file whose repository does not link back to it). */
  readonly notes: readonly string[];
}

/**
 * What discovery remembers between passes: a transcript's working directory never changes (it is on its
 * first lines), so a daemon reads each transcript's head once and later passes only list folders.
 */
export interface DiscoveryCache {
  /** Claude Code transcript (absolute path) → its working directory. */
  readonly transcripts: Map<string, string>;
  /** Codex rollout (absolute path) → its working directory. */
  readonly rollouts: Map<string, string>;
  /**
   * Working directory → its repository, kept while the folder and the repository's `.git` are still there (two
   * `stat`s a pass, where finding the repository again looks for `.git` in every folder up to `/`). A folder
   * outside git is looked at again each pass, so a `git init` there is seen.
   */
  readonly repositories: Map<string, RepositoryOf>;
  /** Folder → its entries as last listed and its mtime then: a folder whose mtime is unchanged is not listed again. */
  readonly listings: Map<string, { readonly mtimeMs: number; readonly entries: readonly Dirent[] }>;
}

export function createDiscoveryCache(): DiscoveryCache {
  return { transcripts: new Map(), rollouts: new Map(), repositories: new Map(), listings: new Map() };
}

/**
 * A listing younger than this is not trusted: a folder's mtime has millisecond steps, so an entry added in the
 * same millisecond as the listing but after it would leave the mtime as it was. 2 s covers coarse clocks.
 */
const FRESH_LISTING_MS = 2_000;

/**
 * The entries of a folder, listed again only when its mtime changed (an entry added, removed or renamed
 * changes it; a file growing does not). One `stat` where a `readdir` of a big folder costs far more.
 */
function listFolder(folder: string, cache: DiscoveryCache): readonly Dirent[] {
  const mtimeMs = statSync(folder).mtimeMs;
  const known = cache.listings.get(folder);
  if (known !== undefined && known.mtimeMs === mtimeMs && Date.now() - mtimeMs > FRESH_LISTING_MS) {
    return known.entries;
  }
  const entries = readdirSync(folder, { withFileTypes: true });
  cache.listings.set(folder, { mtimeMs, entries });
  return entries;
}

/** Every file under `folder` (never through a linked folder), each folder listed through `listFolder`. */
function listTree(
  folder: string,
  cache: DiscoveryCache,
): { readonly parentPath: string; readonly entry: Dirent }[] {
  const files: { readonly parentPath: string; readonly entry: Dirent }[] = [];
  const walk = (current: string): void => {
    for (const entry of listFolder(current, cache)) {
      if (entry.isDirectory()) walk(join(current, entry.name));
      else files.push({ parentPath: current, entry });
    }
  };
  walk(folder);
  return files;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The repository of a working directory, from the cache while it still holds. */
function cachedRepositoryOf(cwd: string, cache: DiscoveryCache): RepositoryOf {
  const known = cache.repositories.get(cwd);
  if (known?.kind === 'repository' && exists(cwd) && exists(join(known.root, '.git'))) return known;
  const found = repositoryOf(cwd);
  cache.repositories.set(cwd, found);
  return found;
}

export interface DiscoverOptions {
  readonly settings: DiscoverSettings;
  readonly cache?: DiscoveryCache | undefined;
}

/**
 * Folders listed one after another before discovery yields to the event loop: a `readdir` of a small folder
 * takes some 10–30 µs synchronously, so 256 hold a daemon's loop for a few milliseconds at most.
 */
const LIST_BATCH = 256;

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

/** Claude Code's per-folder files that are not transcripts and not a person's. */
const CLAUDE_FOLDER_ENTRIES = new Set(['memory']);

interface Collected {
  readonly agent: DiscoverAgent;
  readonly format: TranscriptFormat;
  readonly sessionsDir: string;
  readonly cwd: string;
  /**
   * Claude Code: the folder at or above `cwd` whose name the project folder has (`cwd` itself, or the folder a
   * session started in before it moved to a subfolder). The transcripts are the folder's only when both are in
   * one repository.
   */
  readonly anchor?: string | undefined;
  readonly files: readonly string[] | undefined;
  readonly sessions: number;
}

/** Claude Code: a project folder's transcripts that name no working directory, and its whole count. */
interface ClaudeFolder {
  readonly folder: string;
  readonly sessions: number;
  readonly unplaced: readonly string[];
  /** Transcripts skipped as foreign when the folder was read. */
  readonly dropped: number;
}

function homeOf(path: string, agent: DiscoverAgent, folder: string): DiscoveredHome {
  let linkedTo: string | undefined;
  try {
    if (lstatSync(path).isSymbolicLink()) linkedTo = realpathSync(path);
  } catch (error) {
    if (!isCode(error, 'ENOENT') || lstatExists(path)) linkedTo = DANGLING;
  }
  let found = false;
  try {
    found = statSync(join(path, folder)).isDirectory();
  } catch {
    found = false;
  }
  return { agent, path, folder: join(path, folder), found, ...(linkedTo === undefined ? {} : { linkedTo }) };
}

/** What `linkedTo` says of a home that is a symbolic link to nothing. */
const DANGLING = '(nothing: the link is broken)';

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

async function collectClaudeCode(
  home: DiscoveredHome,
  cache: DiscoveryCache,
  skipped: DiscoverySkip[],
  names: string[],
  claudeFolders: ClaudeFolder[],
): Promise<Collected[]> {
  const projects = home.folder;
  let folders: Dirent[];
  try {
    folders = [...listFolder(projects, cache)];
  } catch (error) {
    if (!isCode(error, 'ENOENT')) {
      skipped.push({
        path: projects,
        reason: SkipReason.unreadable,
        message: `${projects} cannot be listed (${errorMessage(error)}); give this user read access to it`,
      });
    }
    return [];
  }
  const collected: Collected[] = [];
  for (let index = 0; index < folders.length; index++) {
    if (index > 0 && index % LIST_BATCH === 0) await yieldToEventLoop();
    const entry = folders[index]!;
    if (entry.name.startsWith('.')) continue;
    names.push(entry.name);
    const folder = join(projects, entry.name);
    if (!entry.isDirectory()) {
      skipped.push({
        path: folder,
        reason: SkipReason.notATranscript,
        message: entry.isSymbolicLink()
          ? `${folder} is a symbolic link, which Claude Code never makes here; it is not followed (put the folder itself there to have its sessions read)`
          : `${folder} is not a project folder of Claude Code; it is left alone (move it out of ${projects} to silence this)`,
      });
      continue;
    }
    let inside: Dirent[];
    try {
      inside = [...listFolder(folder, cache)];
    } catch (error) {
      skipped.push({
        path: folder,
        reason: SkipReason.unreadable,
        message: `${folder} cannot be listed (${errorMessage(error)}); its sessions are not read: give this user read access to it`,
      });
      continue;
    }
    const transcripts: string[] = [];
    for (const item of inside) {
      if (item.name.startsWith('.')) continue;
      if (item.name.endsWith('.jsonl') && (item.isFile() || item.isSymbolicLink())) {
        transcripts.push(item.name);
      } else if (item.isFile() && !CLAUDE_FOLDER_ENTRIES.has(item.name)) {
        skipped.push({
          path: join(folder, item.name),
          reason: SkipReason.notATranscript,
          message: `${join(folder, item.name)} is not a Claude Code transcript; dreamd reads only *.jsonl and leaves it alone`,
        });
      }
    }
    if (transcripts.length === 0) continue; // a memory-only folder (a repository's memory) or an empty one
    const placed = await placeTranscripts(folder, entry.name, transcripts.sort(), cache, skipped);
    if (placed === undefined) continue;
    collected.push(...placed.own);
    claudeFolders.push(placed.folder);
  }
  return collected;
}

/**
 * The folder at or above `cwd` (up to `/`) whose Claude Code name is exactly `folderName`, or undefined. A
 * session that moved into a subfolder names the subfolder as its `cwd` in the project folder of where it began.
 */
function anchorOf(folderName: string, cwd: string): string | undefined {
  for (let folder = cwd; ; folder = dirname(folder)) {
    if (isClaudeProjectNameOf(folderName, folder)) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * Reads each transcript's working directory (once: the cache keeps it) and sorts the folder's transcripts: its
 * own, by working directory; foreign ones, each skipped with a note; the ones that name none. A folder none of
 * whose transcripts is its own is one skip (a copied or renamed folder).
 */
async function placeTranscripts(
  folder: string,
  folderName: string,
  transcripts: readonly string[],
  cache: DiscoveryCache,
  skipped: DiscoverySkip[],
): Promise<{ readonly own: Collected[]; readonly folder: ClaudeFolder } | undefined> {
  const byCwd = new Map<string, string[]>();
  const unplaced: string[] = [];
  let last = '';
  for (const [index, name] of transcripts.entries()) {
    const path = join(folder, name);
    let cwd = cache.transcripts.get(path);
    if (cwd === undefined) {
      if (index > 0 && index % 64 === 0) await yieldToEventLoop();
      const found = readWorkingDirectorySync(path, 'claude-code');
      if (found.cwd === undefined) {
        last = found.detail;
        unplaced.push(name);
        continue;
      }
      cwd = found.cwd;
      cache.transcripts.set(path, cwd);
    }
    const files = byCwd.get(cwd);
    if (files === undefined) byCwd.set(cwd, [name]);
    else files.push(name);
  }
  if (byCwd.size === 0) {
    skipped.push({
      path: folder,
      reason: SkipReason.noWorkingDirectory,
      message:
        `${folder}: no transcript names its working directory (${last}); its ${transcripts.length} sessions belong ` +
        'to no repository: add a space for this folder by hand ("format": "claude-code") to consolidate them',
    });
    return undefined;
  }
  const own: Collected[] = [];
  const foreign: [string, string[]][] = [];
  for (const [cwd, files] of byCwd) {
    const anchor = anchorOf(folderName, cwd);
    if (anchor === undefined) foreign.push([cwd, files]);
    else {
      own.push({
        agent: 'claude-code',
        format: 'claude-code',
        sessionsDir: folder,
        cwd,
        anchor,
        files,
        sessions: files.length,
      });
    }
  }
  if (own.length === 0) {
    const [cwd] = foreign[0]!;
    skipped.push({
      path: folder,
      reason: SkipReason.renamedFolder,
      message:
        `${folder} holds sessions of ${cwd}, which Claude Code names ${claudeProjectName(cwd)}: a copied or ` +
        'renamed folder, not read (its sessions would count twice); rename it back or move it out of projects/',
    });
    return undefined;
  }
  for (const [cwd, files] of foreign) {
    for (const name of files) skipped.push(foreignTranscript(join(folder, name), cwd));
  }
  const dropped = foreign.reduce((count, [, files]) => count + files.length, 0);
  return { own, folder: { folder, sessions: transcripts.length, unplaced, dropped } };
}

/** The skip of a Claude Code transcript that ran where its project folder does not say. */
function foreignTranscript(path: string, cwd: string, why?: string): DiscoverySkip {
  return {
    path,
    reason: SkipReason.foreignTranscript,
    message:
      `${path} ran in ${cwd}${why ?? `, not in the folder ${basename(dirname(path))} is named for`}: it is not ` +
      "read with its folder's sessions, nor merged into another repository's memory (it may be a copy); move " +
      `it into ${claudeProjectName(cwd)}/ beside it if it belongs to ${cwd}, or out of projects/`,
  };
}

async function collectCodex(
  home: DiscoveredHome,
  cache: DiscoveryCache,
  skipped: DiscoverySkip[],
): Promise<Collected[]> {
  const sessions = home.folder;
  let entries: { readonly parentPath: string; readonly entry: Dirent }[];
  try {
    // Codex's dated folders, each listed again only when it changed (new rollouts land in today's).
    entries = listTree(sessions, cache);
  } catch (error) {
    if (!isCode(error, 'ENOENT')) {
      skipped.push({
        path: sessions,
        reason: SkipReason.unreadable,
        message: `${sessions} cannot be listed (${errorMessage(error)}); give this user read access to it`,
      });
    }
    return [];
  }
  const byCwd = new Map<string, string[]>();
  let read = 0;
  for (const { parentPath, entry } of entries) {
    if (!entry.name.startsWith('rollout-') || !entry.name.endsWith('.jsonl') || !entry.isFile()) continue;
    // String work only (no `relative`, which resolves both paths): this loop runs over every rollout each tick.
    const folder = parentPath === sessions ? '' : parentPath.slice(sessions.length + 1);
    if (folder.startsWith('.') || folder.includes(`${sep}.`)) continue; // under a hidden folder
    const file = folder === '' ? entry.name : `${folder}${sep}${entry.name}`;
    const path = `${sessions}${sep}${file}`;
    let cwd = cache.rollouts.get(path);
    if (cwd === undefined) {
      // Heads are read one at a time, yielding every few: the first pass over a large home reads many.
      if (++read % 64 === 0) await yieldToEventLoop();
      const found = readWorkingDirectorySync(path, 'codex');
      if (found.cwd === undefined) {
        skipped.push({
          path,
          reason: found.reason === 'unreadable' ? SkipReason.unreadable : SkipReason.noWorkingDirectory,
          message:
            found.reason === 'unreadable'
              ? `${path} ${found.detail}; give this user read access to it`
              : `${path}: ${found.detail}, so its repository is unknown; it is not read (a space with a "codex" source for its folder reads it)`,
        });
        continue;
      }
      cwd = found.cwd;
      cache.rollouts.set(path, cwd);
    }
    const files = byCwd.get(cwd);
    if (files === undefined) byCwd.set(cwd, [file]);
    else files.push(file);
  }
  return [...byCwd].map(([cwd, files]) => ({
    agent: 'codex',
    format: 'codex',
    sessionsDir: sessions,
    cwd,
    files: files.sort(),
    sessions: files.length,
  }));
}

/** Finds every repository the configured agents worked in. Never throws for one bad folder or file. */
export async function discoverRepositories(options: DiscoverOptions): Promise<Discovery> {
  const { settings } = options;
  const cache = options.cache ?? createDiscoveryCache();
  const skipped: DiscoverySkip[] = [];
  const homes: DiscoveredHome[] = [];
  const collected: Collected[] = [];
  const claudeProjectFolders: string[] = [];
  const claudeFolders: ClaudeFolder[] = [];
  const notes: string[] = [];
  for (const agent of settings.agents) {
    const home =
      agent === 'claude-code'
        ? homeOf(settings.claudeHome, agent, 'projects')
        : homeOf(settings.codexHome, agent, 'sessions');
    homes.push(home);
    if (!home.found) {
      const variable = agent === 'claude-code' ? 'CLAUDE_CONFIG_DIR' : 'CODEX_HOME';
      skipped.push({
        path: home.folder,
        reason: SkipReason.homeMissing,
        message:
          home.linkedTo === DANGLING
            ? `${home.path} is a symbolic link that leads nowhere; point it at ${agent}'s home (or set ${variable})`
            : `${home.folder} does not exist: no ${agent} sessions there yet (if ${agent} keeps them elsewhere, set ${variable} for dreamd as for ${agent})`,
      });
      continue;
    }
    collected.push(
      ...(agent === 'claude-code'
        ? await collectClaudeCode(home, cache, skipped, claudeProjectFolders, claudeFolders)
        : await collectCodex(home, cache, skipped)),
    );
  }
  return {
    homes,
    repositories: groupByRepository(collected, claudeFolders, { skipped, notes, cache }),
    skipped,
    claudeProjectFolders,
    notes: notes.sort(),
  };
}

/** Where grouping reports what it did not use, and the cache it resolves through. */
interface GroupReport {
  readonly skipped: DiscoverySkip[];
  readonly notes: string[];
  readonly cache: DiscoveryCache;
}

/** A collected folder or set of rollouts, resolved to the repository it feeds. */
interface Placed {
  readonly item: Collected;
  readonly owner: Exclude<RepositoryOf, { kind: 'vanished' }>;
}

/** Resolves a working directory to its repository once, noting a worktree its repository does not list. */
function createRepositoryResolver(report: GroupReport): (cwd: string) => RepositoryOf {
  const { notes, cache } = report;
  const resolved = new Map<string, RepositoryOf>();
  return (cwd) => {
    let found = resolved.get(cwd);
    if (found === undefined) {
      found = cachedRepositoryOf(cwd, cache);
      resolved.set(cwd, found);
      if (found.kind === 'repository' && found.unlinkedGitDir !== undefined) {
        notes.push(
          `${found.root}/.git points into ${found.unlinkedGitDir}, but that repository does not list ` +
            `${found.root} as its worktree: ${found.root} is taken as a repository of its own (if it is a ` +
            `worktree, run \`git worktree repair ${found.root}\` in the main worktree)`,
        );
      }
    }
    return found;
  };
}

/**
 * Each collected item with the repository it feeds. A vanished working directory, or a session that moved into
 * another repository than its folder's, is skipped, and its sessions are counted as dropped from its folder.
 */
function placeCollected(
  collected: readonly Collected[],
  claudeFolders: readonly ClaudeFolder[],
  resolveRepository: (cwd: string) => RepositoryOf,
  skipped: DiscoverySkip[],
): { placed: Placed[]; dropped: Map<string, number> } {
  const dropped = new Map(claudeFolders.map((folder) => [folder.folder, folder.dropped]));
  const placed: Placed[] = [];
  for (const item of collected) {
    let owner = resolveRepository(item.cwd);
    if (owner.kind === 'vanished') {
      const where =
        item.agent === 'claude-code' ? item.sessionsDir : `${item.sessions} rollouts in ${item.sessionsDir}`;
      skipped.push({
        path: item.cwd,
        reason: SkipReason.vanished,
        message:
          `${owner.detail}: the sessions of ${where} are not merged into any other repository's memory; ` +
          'restore the folder to consolidate them, or add a space for them by hand',
      });
      dropped.set(item.sessionsDir, (dropped.get(item.sessionsDir) ?? 0) + item.sessions);
      continue;
    }
    if (item.anchor !== undefined && item.anchor !== item.cwd) {
      // A session that moved into a subfolder: the folder's only while both are one repository.
      const anchor = resolveRepository(item.anchor);
      if (anchor.kind === 'folder' && owner.kind === 'folder') owner = anchor;
      if (anchor.kind === 'vanished' || anchor.root !== owner.root) {
        const why = `, a repository other than ${item.anchor}'s, whose folder ${basename(item.sessionsDir)} is`;
        for (const file of item.files ?? []) {
          skipped.push(foreignTranscript(join(item.sessionsDir, file), item.cwd, why));
        }
        dropped.set(item.sessionsDir, (dropped.get(item.sessionsDir) ?? 0) + item.sessions);
        continue;
      }
    }
    placed.push({ item, owner });
  }
  return { placed, dropped };
}

/**
 * Each Claude Code folder's repositories, and the folders read whole: one repository and nothing dropped. A
 * folder of several repositories skips its transcripts that name no working directory.
 */
function foldersReadWhole(
  placed: readonly Placed[],
  claudeFolders: readonly ClaudeFolder[],
  dropped: ReadonlyMap<string, number>,
  skipped: DiscoverySkip[],
): { whole: Set<string>; rootsOf: Map<string, Set<string>> } {
  const rootsOf = new Map<string, Set<string>>();
  for (const { item, owner } of placed) {
    if (item.agent !== 'claude-code') continue;
    const roots = rootsOf.get(item.sessionsDir) ?? new Set<string>();
    roots.add(owner.root);
    rootsOf.set(item.sessionsDir, roots);
  }
  const whole = new Set<string>();
  for (const folder of claudeFolders) {
    const roots = rootsOf.get(folder.folder);
    if (roots === undefined) continue;
    const single = roots.size === 1;
    if (single && (dropped.get(folder.folder) ?? 0) === 0) whole.add(folder.folder);
    for (const name of folder.unplaced) {
      if (single) continue; // read with the folder's one repository
      skipped.push({
        path: join(folder.folder, name),
        reason: SkipReason.noWorkingDirectory,
        message:
          `${join(folder.folder, name)} names no working directory, and its folder holds sessions of several ` +
          'repositories, so it is not read; add a space for it by hand ("format": "claude-code")',
      });
    }
  }
  return { whole, rootsOf };
}

/** The placed items joined into one entry per repository, each folder one source, sorted by root. */
function joinRepositories(
  placed: readonly Placed[],
  claudeFolders: readonly ClaudeFolder[],
  whole: ReadonlySet<string>,
  rootsOf: ReadonlyMap<string, ReadonlySet<string>>,
): DiscoveredRepository[] {
  const unplacedOf = new Map(claudeFolders.map((folder) => [folder.folder, folder.unplaced]));
  const sessionsOf = new Map(claudeFolders.map((folder) => [folder.folder, folder.sessions]));
  const repositories = new Map<
    string,
    { kind: 'repository' | 'folder'; worktrees: Set<string>; sources: Map<string, DiscoveredSource> }
  >();
  for (const { item, owner } of placed) {
    let repository = repositories.get(owner.root);
    if (repository === undefined) {
      repository = { kind: owner.kind, worktrees: new Set(), sources: new Map() };
      repositories.set(owner.root, repository);
    }
    if (owner.kind === 'repository' && owner.worktree !== undefined) repository.worktrees.add(owner.worktree);
    const key = `${item.format}\0${item.sessionsDir}`;
    const known = repository.sources.get(key);
    const readWhole = item.agent === 'claude-code' && whole.has(item.sessionsDir);
    const files = readWhole ? undefined : item.files;
    const sessions = readWhole ? (sessionsOf.get(item.sessionsDir) ?? item.sessions) : item.sessions;
    if (known === undefined) {
      const unplaced =
        item.agent === 'claude-code' && !readWhole && rootsOf.get(item.sessionsDir)?.size === 1;
      const extra = unplaced ? (unplacedOf.get(item.sessionsDir) ?? []) : [];
      repository.sources.set(key, {
        agent: item.agent,
        format: item.format,
        sessionsDir: item.sessionsDir,
        workingDirectories: [item.cwd],
        ...(files === undefined ? {} : { files: [...files, ...extra].sort() }),
        sessions: readWhole ? sessions : sessions + extra.length,
      });
    } else {
      // Several working directories of one repository (a subfolder, a worktree) in one folder are one source.
      repository.sources.set(key, {
        ...known,
        workingDirectories: [...known.workingDirectories, item.cwd].sort(),
        ...(readWhole ? {} : { files: [...(known.files ?? []), ...(files ?? [])].sort() }),
        sessions: readWhole ? known.sessions : known.sessions + item.sessions,
      });
    }
  }
  return [...repositories]
    .map(([root, found]) => ({
      root,
      kind: found.kind,
      worktrees: [...found.worktrees].sort(),
      sources: [...found.sources.values()].sort(bySource),
    }))
    .sort((left, right) => (left.root < right.root ? -1 : left.root > right.root ? 1 : 0));
}

/**
 * Resolves each collected working directory and joins them into one entry per repository. A Claude Code folder
 * whose transcripts all went to one repository is read whole; one whose transcripts were split (foreign ones
 * skipped, or several repositories of one name) is read file by file, each repository its own files.
 */
function groupByRepository(
  collected: readonly Collected[],
  claudeFolders: readonly ClaudeFolder[],
  report: GroupReport,
): DiscoveredRepository[] {
  const resolveRepository = createRepositoryResolver(report);
  const { placed, dropped } = placeCollected(collected, claudeFolders, resolveRepository, report.skipped);
  const { whole, rootsOf } = foldersReadWhole(placed, claudeFolders, dropped, report.skipped);
  return joinRepositories(placed, claudeFolders, whole, rootsOf);
}

function bySource(left: DiscoveredSource, right: DiscoveredSource): number {
  if (left.format !== right.format) return left.format === 'claude-code' ? -1 : 1;
  return left.sessionsDir < right.sessionsDir ? -1 : left.sessionsDir > right.sessionsDir ? 1 : 0;
}

/** The memory folder Claude Code reads for a discovered repository. */
export function memoryFolderOf(discovery: Discovery, settings: DiscoverSettings, root: string): string {
  return claudeMemoryFolder(join(settings.claudeHome, 'projects'), root, discovery.claudeProjectFolders);
}
