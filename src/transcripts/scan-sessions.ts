import { lstatSync, statSync, type Stats } from 'node:fs';
import { readdir, realpath } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SessionSource, Space, TranscriptFormat } from '../config/schema.js';
import { TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import type { LedgerLookup } from '../core/ledger.js';
import type { KeptOutLookup, KeptOutMark } from '../core/kept-out.js';
import type { SessionStatus } from './types.js';
import { readSessionFile } from './read-session.js';
import { escapeUnsafe, hasUnsafeCharacter, unsafeNameFailure } from './session-name.js';
import { isInsideDirectory } from './session-path.js';
import { transcriptFailure } from './transcript-failure.js';
import { TRANSCRIPT_READERS, readerFor } from './transcript-readers.js';
import { createRepositoryResolver } from './repository-root.js';
import { readWorkingDirectorySync } from './working-directory.js';

/**
 * The cheap check the scheduler runs every tick: which session files of a space are live, settled,
 * consolidated or broken. Its cost grows with new and changed sessions only:
 *
 * - one `readdir` for the directory (the whole tree for Codex's dated folders) and one `stat` per session file (synchronous, in batches
 *   between which the event loop runs: see `STAT_BATCH_FILES`);
 * - a file whose size and mtime equal its ledger entry is `consolidated` without being opened;
 * - a file marked kept out (`.dreamd/kept-out.json`) is `kept-out` without being opened;
 * - a new or changed file that has been quiet for `quietMinutes` is `settled` without being opened;
 * - only a recently modified file of a format that marks its end (native `endedAt`) is parsed, to see whether
 *   it has ended (settled) or not (live); a recently modified Claude Code file is `live` (Claude Code never
 *   writes an end marker).
 */

/** File extension of the session files of each format (from the readers' table). */
export const SESSION_EXTENSIONS: Readonly<Record<TranscriptFormat, string>> = {
  native: TRANSCRIPT_READERS.native.extension,
  'claude-code': TRANSCRIPT_READERS['claude-code'].extension,
  codex: TRANSCRIPT_READERS.codex.extension,
};

/** One session file as the scanner sees it. */
export interface ScanEntry {
  /** Known when the ledger has the file or the file was parsed during the scan. */
  readonly sessionId?: string | undefined;
  /**
   * Path relative to the sessions directory: the file name, or for a format whose files sit in sub-folders
   * (Codex) the path under it (`2025/10/29/rollout-….jsonl`). In a space of several sources
   * (`space.sources`), the absolute path.
   */
  readonly file: string;
  /** Bytes, from `stat`. */
  readonly size: number;
  /** Modification time in ms since the epoch, from `stat`. */
  readonly mtimeMs: number;
  readonly status: SessionStatus;
  /** Why a `broken` file is broken. */
  readonly reason?: TranscriptErrorReason | undefined;
  /** The full message (path, reason, fix) of a `broken` file. */
  readonly message?: string | undefined;
  /** Index of the first message not consolidated yet (the ledger's `messageCount`, else 0). */
  readonly fromMessage: number;
  /** Why a `kept-out` file is kept out of memory. */
  readonly keptOut?: KeptOutMark | undefined;
}

/** Every session file of one space, sorted by file name. */
export interface ScanResult {
  readonly space: string;
  /** Absolute sessions directory. */
  readonly sessionsDir: string;
  readonly format: TranscriptFormat;
  /** The space's sources when it has several (its entries' `file` are then absolute); absent: one folder. */
  readonly sources?: readonly SessionSource[] | undefined;
  readonly entries: readonly ScanEntry[];
}

/** Inputs of `scanSessions`. The clock and the ledger are passed in; nothing is read from globals. */
export interface ScanSessionsOptions {
  readonly space: Space;
  readonly ledger: LedgerLookup;
  readonly now: Date;
  /** A file unchanged for this many minutes is settled (gates.quietMinutes, default 30). */
  readonly quietMinutes: number;
  /** Largest transcript read, in bytes (limits.maxSessionBytes). */
  readonly maxBytes: number;
  /**
   * The space's sessions kept out of memory (`.dreamd/kept-out.json`): such a file is `kept-out`, never
   * opened, whatever the ledger says. Omitted: none.
   */
  readonly keptOut?: KeptOutLookup | undefined;
}

/**
 * A session file's name: the format's extension, not hidden, and not a file the format says is no session
 * (Claude Code's old-layout `agent-*.jsonl`, read with its parent: see claude-code-subagents.ts).
 */
function isSessionName(name: string, format: TranscriptFormat): boolean {
  const reader = readerFor(format);
  return (
    !name.startsWith('.') &&
    name.endsWith(reader.extension) &&
    name.length > reader.extension.length &&
    !reader.isNotASession(name)
  );
}

/** A session file found by the listing: its name in the scan, its path, and whether it is a link (unknown: ask). */
interface Listed {
  readonly name: string;
  readonly path: string;
  readonly isLink: boolean | undefined;
}

async function listSessionFiles(
  sessionsDir: string,
  format: TranscriptFormat,
  absoluteNames = false,
): Promise<Listed[]> {
  const nested = readerFor(format).nestedFolders;
  let dirents;
  try {
    // Recursive listing (Codex's YYYY/MM/DD folders) reports a linked folder as a link and never enters it.
    dirents = await readdir(sessionsDir, { withFileTypes: true, recursive: nested });
  } catch (error) {
    // A space whose agent has not written a session yet has no directory: nothing to scan.
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT') return [];
    throw transcriptFailure(
      sessionsDir,
      TranscriptErrorReason.unreadable,
      `the sessions directory cannot be listed (${errorMessage(error)})`,
      error,
    );
  }
  const listed: Listed[] = [];
  for (const dirent of dirents) {
    if (!isSessionName(dirent.name, format) || !(dirent.isFile() || dirent.isSymbolicLink())) continue;
    const folder = nested ? relative(sessionsDir, dirent.parentPath) : '';
    // A file under a hidden folder is not a session, as a hidden file is not.
    if (folder.split(sep).some((part) => part.startsWith('.'))) continue;
    const name = folder === '' ? dirent.name : join(folder, dirent.name);
    const path = join(sessionsDir, name);
    listed.push({ name: absoluteNames ? path : name, path, isLink: dirent.isSymbolicLink() });
  }
  return listed.sort(byName);
}

function byName(left: { readonly name: string }, right: { readonly name: string }): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

type Observed =
  | { readonly name: string; readonly stats: Stats }
  | { readonly name: string; readonly failure: TranscriptError };

/**
 * Files stat'ed one after the other before the scan yields to the event loop. The stat is synchronous: for a
 * cached inode it takes a few microseconds, and the promise form spends several times that on the round trip
 * through libuv's thread pool (1,000 files on the 2-core bench machine: about 4 ms synchronous, 10–25 ms
 * with promises), which is most of a tick. 256 files hold the event loop for about a millisecond.
 */
const STAT_BATCH_FILES = 256;

/** One `stat` per file; symbolic links also get a `realpath`, since they may lead outside. */
async function observe(
  { name, path, isLink }: Listed,
  realSessionsDir: () => Promise<string>,
): Promise<Observed | undefined> {
  try {
    if (hasUnsafeCharacter(name)) throw unsafeNameFailure(path);
    if (isLink ?? lstatSync(path).isSymbolicLink()) {
      const target = await realpath(path).catch(() => undefined);
      if (target === undefined || !isInsideDirectory(await realSessionsDir(), target)) {
        const where =
          target === undefined
            ? 'a symbolic link whose target cannot be resolved'
            : `a symbolic link to ${target}`;
        throw transcriptFailure(
          path,
          TranscriptErrorReason.outsideDirectory,
          `${where}, outside the sessions directory`,
        );
      }
    }
    const stats = statSync(path);
    if (!stats.isFile())
      throw transcriptFailure(path, TranscriptErrorReason.unreadable, 'not a regular file');
    return { name, stats };
  } catch (error) {
    if (error instanceof TranscriptError) return { name, failure: error };
    // Deleted between readdir and stat: it is simply gone.
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT')
      return undefined;
    return {
      name,
      failure: transcriptFailure(
        path,
        TranscriptErrorReason.unreadable,
        `cannot stat the file (${errorMessage(error)})`,
        error,
      ),
    };
  }
}

/**
 * Marks as broken (`duplicate-id`) every file whose session id another file already has. The file the
 * ledger knows under that id keeps it; otherwise the first by name does.
 */
export function markDuplicateIds(
  entries: readonly ScanEntry[],
  ledger: LedgerLookup,
  sessionsDir: string,
): ScanEntry[] {
  const owners = new Map<string, string>();
  for (const entry of entries) {
    if (
      entry.sessionId !== undefined &&
      entry.status !== 'broken' &&
      ledger.get(entry.sessionId)?.file === entry.file
    ) {
      owners.set(entry.sessionId, entry.file);
    }
  }
  return entries.map((entry) => {
    if (entry.sessionId === undefined || entry.status === 'broken') return entry;
    const owner = owners.get(entry.sessionId);
    if (owner === undefined) {
      owners.set(entry.sessionId, entry.file);
      return entry;
    }
    if (owner === entry.file) return entry;
    const failure = transcriptFailure(
      resolve(sessionsDir, entry.file),
      TranscriptErrorReason.duplicateId,
      `session id "${entry.sessionId}" is already used by ${owner}`,
    );
    return { ...entry, status: 'broken', reason: failure.reason, message: failure.message };
  });
}

/** Lists a space's session files and says where each stands. Never throws for one bad file. */
export async function scanSessions(options: ScanSessionsOptions): Promise<ScanResult> {
  const { space, ledger } = options;
  const sessionsDir = resolve(space.sessionsDir);
  if (space.sources === undefined) {
    const source = { format: space.format, sessionsDir };
    const listed = await listSessionFiles(sessionsDir, space.format);
    const entries = await observeSource(listed, source, options);
    return {
      space: space.id,
      sessionsDir,
      format: space.format,
      entries: markDuplicateIds(entries, ledger, sessionsDir),
    };
  }
  // Several sources: every file is named by its absolute path, so two folders never share a name.
  const entries: ScanEntry[] = [];
  for (const source of space.sources) {
    const listed = await listSource(source);
    entries.push(...(await observeSource(listed, source, options)));
  }
  entries.sort((left, right) => byName({ name: left.file }, { name: right.file }));
  return {
    space: space.id,
    sessionsDir,
    format: space.format,
    sources: space.sources,
    entries: markDuplicateIds(entries, ledger, sessionsDir),
  };
}

/**
 * The working directory named by each transcript of a repository-limited source, by path. A transcript's
 * first lines never change, so one read a file serves every later tick; a file that names none yet (just
 * created) is read again next time.
 */
const workingDirectories = new Map<string, string>();

/** A source's session files: its `files`, else its folder's, kept to its `repository` when it names one. */
async function listSource(source: SessionSource): Promise<Listed[]> {
  const sessionsDir = resolve(source.sessionsDir);
  if (source.files !== undefined) {
    return source.files
      .filter((file) => !isAbsolute(file) && isSessionName(file.split(sep).pop() ?? '', source.format))
      .map((file) => {
        const path = join(sessionsDir, file);
        return { name: path, path, isLink: undefined };
      })
      .sort(byName);
  }
  const listed = await listSessionFiles(sessionsDir, source.format, true);
  if (source.repository === undefined) return listed;
  const repository = resolve(source.repository);
  const resolveRepository = createRepositoryResolver();
  const kept: Listed[] = [];
  let read = 0;
  for (const item of listed) {
    let cwd = workingDirectories.get(item.path);
    if (cwd === undefined) {
      if (++read % 64 === 0) await yieldToEventLoop();
      const found = readWorkingDirectorySync(item.path, source.format);
      if (found.cwd === undefined) continue;
      cwd = found.cwd;
      workingDirectories.set(item.path, cwd);
    }
    const owner = resolveRepository(cwd);
    if (owner.kind !== 'vanished' && owner.root === repository) kept.push(item);
  }
  return kept;
}

/** One `stat` per listed file (in batches), then each file's status against the ledger. */
async function observeSource(
  listed: readonly Listed[],
  source: { readonly format: TranscriptFormat; readonly sessionsDir: string },
  options: ScanSessionsOptions,
): Promise<ScanEntry[]> {
  const { ledger, now, quietMinutes, maxBytes } = options;
  const { format } = source;
  const sessionsDir = resolve(source.sessionsDir);
  let real: Promise<string> | undefined;
  const realSessionsDir = (): Promise<string> => (real ??= realpath(sessionsDir));
  const observed: (Observed | undefined)[] = [];
  for (let start = 0; start < listed.length; start += STAT_BATCH_FILES) {
    if (start > 0) await yieldToEventLoop();
    const batch = listed.slice(start, start + STAT_BATCH_FILES);
    observed.push(...(await Promise.all(batch.map((item) => observe(item, realSessionsDir)))));
  }
  const quietMs = quietMinutes * 60_000;
  const entries: ScanEntry[] = [];
  for (const item of observed) {
    if (item === undefined) continue;
    if ('failure' in item) {
      entries.push({
        // A refused name is only ever shown (never opened), so it is shown escaped: one line in any output.
        file: escapeUnsafe(item.name),
        size: 0,
        mtimeMs: 0,
        status: 'broken',
        reason: item.failure.reason,
        message: item.failure.message,
        fromMessage: 0,
      });
      continue;
    }
    const { size, mtimeMs } = item.stats;
    const known = ledger.getByFile(item.name);
    const base = {
      file: item.name,
      size,
      mtimeMs,
      fromMessage: known?.messageCount ?? 0,
      sessionId: known?.sessionId,
    };
    const keptOut = options.keptOut?.get(item.name, known?.sessionId);
    if (keptOut !== undefined) {
      entries.push({ ...base, status: 'kept-out', keptOut });
    } else if (known !== undefined && known.size === size && known.mtimeMs === mtimeMs) {
      entries.push({ ...base, status: 'consolidated' });
    } else if (now.getTime() - mtimeMs >= quietMs) {
      entries.push({ ...base, status: 'settled' });
    } else if (readerFor(format).marksItsEnd) {
      entries.push(await checkRecentEnd(base, sessionsDir, format, maxBytes));
    } else {
      entries.push({ ...base, status: 'live' });
    }
  }
  return entries;
}

/** A file modified within the quiet period: settled only if it says it has ended. */
async function checkRecentEnd(
  base: Omit<ScanEntry, 'status'>,
  sessionsDir: string,
  format: TranscriptFormat,
  maxBytes: number,
): Promise<ScanEntry> {
  try {
    const { session, size, mtimeMs } = await readSessionFile(base.file, {
      format,
      sessionsDir,
      fromMessage: base.fromMessage,
      maxBytes,
    });
    const read = { ...base, size, mtimeMs, sessionId: session.id };
    if (session.endedAt === undefined) return { ...read, status: 'live' };
    // Ended, but nothing after what the ledger already has: nothing to consolidate.
    return { ...read, status: session.messages.length === 0 ? 'consolidated' : 'settled' };
  } catch (error) {
    const failure =
      error instanceof TranscriptError
        ? error
        : transcriptFailure(
            resolve(sessionsDir, base.file),
            TranscriptErrorReason.unreadable,
            `reading failed (${errorMessage(error)})`,
            error,
          );
    return { ...base, status: 'broken', reason: failure.reason, message: failure.message };
  }
}

/** How many files of a scan are in each state. */
export function countByStatus(scan: ScanResult): Record<SessionStatus, number> {
  const counts: Record<SessionStatus, number> = {
    live: 0,
    settled: 0,
    consolidated: 0,
    broken: 0,
    'kept-out': 0,
  };
  for (const entry of scan.entries) counts[entry.status] += 1;
  return counts;
}
