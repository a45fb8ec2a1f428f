/**
 * Replace a memory file without losing bytes someone else wrote meanwhile. No rename compares and swaps, so
 * each attempt goes:
 *
 *   check    open the target (O_NOFOLLOW) and read it through that handle; bytes other than the run's base
 *            are merged into the new bytes (`mergeArrived`), written beside the staged file, and the attempt
 *            repeats
 *   rename   the new bytes replace the target; the handle still holds the file that was there (its inode),
 *            and is watched from now on
 *   recheck  every watched file is read again through its handle: a writer that opened one before its rename
 *            (an appender) wrote there; those bytes are merged and the target replaced again (the next check
 *            reads the new target, so a writer that reached it by name meanwhile is merged too)
 *
 * The caller keeps the watched handles until the directory is fsynced and calls `recheckLate`, which reads
 * them once more (a writer slower than the first recheck). After `MAX_ATTEMPTS` attempts, or when the bytes
 * cannot be merged (see arrived-bytes.ts), the file is deferred: the person's bytes stay (bytes that reached a
 * replaced file and cannot be merged are put back when the target still holds the run's bytes, else kept under
 * `.dreamd/conflicts/`) and the caller holds the run's facts back. What no check can see: an editor's
 * rename-save that lands between a check's read and the rename replaces a file nobody reads again (the
 * README's guarantees give that window's size); and a writer that opened the old file before the rename and
 * writes after the last recheck.
 */
import { constants, lstatSync, renameSync, type Stats } from 'node:fs';
import { mkdir, open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { mergeArrived } from '../memory/arrived-bytes.js';

/** Attempts per file before it is deferred: someone saving more often than a run can write is not outrun. */
export const MAX_ATTEMPTS = 10;
/**
 * Once the target holds some of the run's bytes, bytes merged from a replaced file exist nowhere else: the
 * attempts go on longer before those bytes are set aside under `.dreamd/conflicts/`.
 */
export const MAX_ATTEMPTS_AFTER_RENAME = 100;

export interface GuardedFile {
  /** Relative path, for the merge rules and messages. */
  readonly path: string;
  readonly target: string;
  /** The staged new bytes (merged bytes go to a new file beside it, see `writeCandidate`). */
  readonly staged: string;
  /** The bytes the new ones were built from; null: the file did not exist. */
  readonly base: string | null;
  readonly content: string;
  /** Called when a check found the bytes it expects, just before the rename (a hook for fault injection). */
  readonly onChecked?: (() => void) | undefined;
}

/** A file a rename replaced, still open, and the bytes merged from it so far. */
interface Watched {
  readonly handle: FileHandle;
  seen: string;
}

/** A replaced file whose old files are still open, for `recheckLate`. */
export interface HeldOldFile {
  readonly file: GuardedFile;
  readonly watched: Watched[];
  /** The bytes now at the target, as renamed. */
  readonly content: string;
}

export type ReplaceOutcome =
  | { readonly status: 'replaced'; readonly content: string; readonly held: HeldOldFile | undefined }
  | {
      readonly status: 'deferred';
      /** What the person's file holds (null: no file), and what the run meant to write. */
      readonly seen: string | null;
      readonly content: string;
      readonly reason: string;
      /** The run's bytes were renamed into place before the file was given up (they are there, merged). */
      readonly landed?: boolean;
    };

type Deferred = Extract<ReplaceOutcome, { status: 'deferred' }>;

/** Measuring hook: milliseconds between a check's read and the rename that follows it (the blind window). */
export type WindowObserver = (milliseconds: number) => void;

/** All the bytes of an open file from offset 0, whatever the handle's position. */
async function readWhole(handle: FileHandle): Promise<string> {
  const chunks: Buffer[] = [];
  let position = 0;
  for (;;) {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function openNoFollow(target: string): Promise<FileHandle | undefined> {
  try {
    return await open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Merged bytes, ready to rename: a new file next to the staged one (`<staged>.<n>`), written in one call.
 * The staged file itself is not rewritten: a crash before the rename leaves it and its base, and recovery
 * merges again (merging is idempotent); after the rename the staged file is removed, so recovery skips it.
 */
async function writeCandidate(file: GuardedFile, attempt: number, content: string): Promise<string> {
  const candidate = `${file.staged}.${attempt}`;
  // 'w': a leftover of a crashed attempt with this number is simply overwritten; nobody else reads it.
  await writeFile(candidate, content, { flag: 'w' });
  return candidate;
}

/** Bytes staged as a base (`serializeBase`); undefined when unreadable (an older staging format). */
export function parseBase(text: string | null): string | null | undefined {
  if (text === null) return undefined;
  try {
    const value = (JSON.parse(text) as { base?: unknown }).base;
    return typeof value === 'string' || value === null ? value : undefined;
  } catch {
    return undefined;
  }
}

export function serializeBase(base: string | null): string {
  return JSON.stringify({ base });
}

function deferred(file: GuardedFile, seen: string | null, content: string, why: string): Deferred {
  return {
    status: 'deferred',
    seen,
    content,
    reason:
      `${file.path} ${why} while dreamd wrote it; your version is kept as it is and this run's changes to it ` +
      'wait for the next run',
  };
}

/**
 * Bytes reached a replaced file and cannot be merged with the run's: the person's version goes back in place
 * when the target still holds what the run renamed there; otherwise (someone wrote the new file too) they are
 * kept under `.dreamd/conflicts/` and the message names it. Either way the file is deferred.
 */
async function putBack(
  file: GuardedFile,
  theirs: string,
  renamed: string,
  content: string,
): Promise<ReplaceOutcome> {
  const handle = await openNoFollow(file.target);
  const now = handle === undefined ? null : await readWhole(handle).finally(() => handle.close());
  if (now === renamed) {
    await rename(await writeCandidate(file, MAX_ATTEMPTS_AFTER_RENAME, theirs), file.target);
    return {
      ...deferred(file, theirs, content, 'was changed in a way that cannot be merged'),
      landed: false,
    };
  }
  return setAside(file, theirs, now, 'was changed in two ways at once');
}

/**
 * Bytes that reached a replaced file and could not be put in place: kept in `.dreamd/conflicts/<file>.<time>`
 * (temp + rename), and the file is deferred with a message that names it.
 */
async function setAside(
  file: GuardedFile,
  theirs: string,
  seen: string | null,
  why: string,
): Promise<ReplaceOutcome> {
  const conflicts = path.join(path.dirname(file.target), '.dreamd', 'conflicts');
  await mkdir(conflicts, { recursive: true });
  const aside = path.join(conflicts, `${path.basename(file.path)}.${Date.now()}`);
  const temporary = `${aside}.tmp`;
  await writeFile(temporary, theirs, { flag: 'w' });
  await rename(temporary, aside);
  return deferred(
    file,
    seen,
    theirs,
    `${why}; what was written into the file dreamd replaced is kept in .dreamd/conflicts/${path.basename(aside)}`,
  );
}

/**
 * Bytes that reached replaced files and are not at the target yet: the tails appended there, and whether every
 * arrival was an append (only then can they be appended again, see `landCarried`).
 */
interface Carried {
  readonly tails: string[];
  pure: boolean;
}

/** What arrived in one watched file since its last read; updates its `seen`. Undefined: nothing. */
async function arrivedIn(entry: Watched): Promise<{ after: string; tail: string | undefined } | undefined> {
  const after = await readWhole(entry.handle);
  if (after === entry.seen) return undefined;
  const tail = after.startsWith(entry.seen) ? after.slice(entry.seen.length) : undefined;
  return { after, tail };
}

/** Read every watched file; merge what arrived into `content`. Undefined: nothing arrived. */
async function mergeWatched(
  file: GuardedFile,
  watched: readonly Watched[],
  content: string,
): Promise<{ content: string; carried: Carried } | { conflict: string } | undefined> {
  let merged = content;
  const carried: Carried = { tails: [], pure: true };
  for (const entry of watched) {
    const arrived = await arrivedIn(entry);
    if (arrived === undefined) continue;
    const next = mergeArrived(file.path, entry.seen, arrived.after, merged);
    if (next === undefined) return { conflict: arrived.after };
    merged = next;
    entry.seen = arrived.after;
    if (arrived.tail === undefined) carried.pure = false;
    else carried.tails.push(arrived.tail);
  }
  return merged !== content || carried.tails.length > 0 || !carried.pure
    ? { content: merged, carried }
    : undefined;
}

/**
 * Give up on a file whose merged bytes hold lines that reached a replaced file (the writer kept writing faster
 * than the file could be replaced): those lines exist nowhere else. Appended lines are appended to the file
 * again (the writer's own operation, one write, repeated once; never a rewrite of the file), anything else is
 * set aside under `.dreamd/conflicts/`. The file is deferred either way.
 */
async function landCarried(
  file: GuardedFile,
  watched: readonly Watched[],
  carried: Carried,
  content: string,
  seen: string | null,
  why: string,
): Promise<ReplaceOutcome> {
  for (const entry of watched) {
    const arrived = await arrivedIn(entry);
    if (arrived === undefined) continue;
    entry.seen = arrived.after;
    if (arrived.tail === undefined) carried.pure = false;
    else carried.tails.push(arrived.tail);
  }
  if (carried.pure && seen !== null) {
    const handle = await open(file.target, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    try {
      await handle.write(carried.tails.join(''));
    } finally {
      await handle.close();
    }
    return deferred(
      file,
      seen,
      content,
      `${why}; lines written into the file it replaced were appended again`,
    );
  }
  return setAside(file, content, seen, why);
}

/**
 * Renames `source` over `target` when the file at `target` is still the one checked (`checked`: its stat;
 * undefined: there was none). Synchronous on purpose: nothing else of this process runs between the look and
 * the rename. False, and nothing renamed, when another file is there now.
 */
function renameIfStill(source: string, target: string, checked: Stats | undefined): boolean {
  const now = lstatSync(target, { throwIfNoEntry: false });
  const same =
    now === undefined
      ? checked === undefined
      : checked !== undefined && now.ino === checked.ino && now.dev === checked.dev;
  if (!same) return false;
  renameSync(source, target);
  return true;
}

async function closeAll(watched: readonly Watched[]): Promise<void> {
  await Promise.all(watched.map((entry) => entry.handle.close().catch(() => undefined)));
}

/** Replace the target with the staged bytes, merging what arrived before and after the rename (see the header). */
export async function guardedReplace(
  file: GuardedFile,
  observe?: WindowObserver,
  watched: Watched[] = [],
  /** Bytes in the content that reached a replaced file and exist nowhere else (see `recheckLate`). */
  carriedIn?: Carried,
): Promise<ReplaceOutcome> {
  const state = { landed: carriedIn !== undefined };
  const outcome = await replaceAttempts(file, observe, watched, carriedIn, state);
  return outcome.status === 'deferred' && outcome.landed === undefined
    ? { ...outcome, landed: state.landed }
    : outcome;
}

async function replaceAttempts(
  file: GuardedFile,
  observe: WindowObserver | undefined,
  watched: Watched[],
  carriedIn: Carried | undefined,
  state: { landed: boolean },
): Promise<ReplaceOutcome> {
  let base = file.base;
  let content = file.content;
  let source = file.staged;
  let lastSeen: string | null = base;
  let replaced = false;
  /** Set while `content` holds bytes merged from a replaced file: they must land, never be dropped. */
  let carried = carriedIn;
  let attempt = 0;
  try {
    for (; attempt < (carried !== undefined ? MAX_ATTEMPTS_AFTER_RENAME : MAX_ATTEMPTS); attempt++) {
      const handle = await openNoFollow(file.target);
      const seen =
        handle === undefined
          ? null
          : await readWhole(handle).catch(async (error: unknown) => {
              await handle.close();
              throw error;
            });
      const checkedAt = performance.now();
      lastSeen = seen;
      if (seen !== base) {
        await handle?.close();
        const merged = mergeArrived(file.path, base, seen, content);
        if (merged === undefined) {
          const why = 'was changed in a way that cannot be merged';
          if (carried !== undefined) return await landCarried(file, watched, carried, content, seen, why);
          return deferred(file, seen, content, why);
        }
        content = merged;
        base = seen;
        source = await writeCandidate(file, attempt, content);
        continue;
      }
      // An editor's save by rename that landed after the check put another file at the target: the next
      // attempt reads and merges it. The name is compared and the rename made back to back, synchronously,
      // so only a save landing between those two calls (microseconds) is replaced unread.
      const checked = await handle?.stat();
      file.onChecked?.();
      if (!renameIfStill(source, file.target, checked)) {
        await handle?.close();
        continue;
      }
      observe?.(performance.now() - checkedAt);
      state.landed = true;
      carried = undefined;
      if (source !== file.staged) await unlink(file.staged).catch(() => undefined);
      if (handle !== undefined && seen !== null) watched.push({ handle, seen });
      const arrived = await mergeWatched(file, watched, content);
      if (arrived === undefined) {
        replaced = true;
        return { status: 'replaced', content, held: { file, watched, content } };
      }
      if ('conflict' in arrived) return await putBack(file, arrived.conflict, content, content);
      // A writer wrote into a replaced file after its check: merge and replace again.
      base = content;
      content = arrived.content;
      carried = arrived.carried;
      source = await writeCandidate(file, attempt, content);
    }
    if (carried !== undefined)
      return await landCarried(
        file,
        watched,
        carried,
        content,
        lastSeen,
        `kept changing (${attempt} attempts)`,
      );
  } finally {
    if (!replaced) await closeAll(watched);
    for (let created = 0; created <= Math.min(attempt, MAX_ATTEMPTS_AFTER_RENAME); created++)
      await unlink(`${file.staged}.${created}`).catch(() => undefined);
  }
  return deferred(file, lastSeen, content, `kept changing (${attempt} attempts)`);
}

/**
 * The last look at a replaced file's old files, after the directory fsync: bytes a slow writer put there are
 * merged and the target replaced again (with the same checks). Closes the handles.
 */
export async function recheckLate(held: HeldOldFile, observe?: WindowObserver): Promise<ReplaceOutcome> {
  let content = held.content;
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const arrived = await mergeWatched(held.file, held.watched, content);
      if (arrived === undefined) return { status: 'replaced', content, held: undefined };
      if ('conflict' in arrived) return await putBack(held.file, arrived.conflict, content, content);
      await writeFile(held.file.staged, arrived.content, { flag: 'w' });
      const outcome = await guardedReplace(
        { ...held.file, base: content, content: arrived.content },
        observe,
        held.watched,
        arrived.carried,
      );
      if (outcome.status === 'deferred') return outcome;
      content = outcome.content;
    }
    return { status: 'replaced', content, held: undefined };
  } finally {
    await closeAll(held.watched);
  }
}
