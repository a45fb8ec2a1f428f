/**
 * Replace a memory file without losing bytes someone else wrote meanwhile. No rename compares and swaps, so
 * each attempt goes:
 *
 *   check    open the target (O_NOFOLLOW) and read it through that handle; bytes other than the run's base
 *            are merged into the new bytes (`mergeArrived`), which are staged again, and the attempt repeats
 *   rename   the staged file replaces the target; the handle still holds the old file (its inode)
 *   recheck  the old file is read again through the handle: a writer that opened it before the rename
 *            (an appender) wrote there; those bytes are merged and written again (the next attempt checks
 *            the new target, so a writer that reached it by name meanwhile is merged too)
 *
 * The caller keeps the handle until the directory is fsynced and calls `recheckLate`, which reads the old
 * file once more (a writer slower than the first recheck). After `MAX_ATTEMPTS` attempts, or when the bytes
 * cannot be merged (see arrived-bytes.ts), the file is deferred: the person's bytes stay and the caller holds
 * the run's facts back. What no check can see: an editor's rename-save that lands between the check's read and
 * the rename replaces a file nobody reads again (the README's guarantees give that window's size).
 */
import { constants } from 'node:fs';
import { open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { mergeArrived } from './arrived-bytes.js';

/** Attempts per file before it is deferred: someone saving more often than a run can write is not outrun. */
export const MAX_ATTEMPTS = 5;

export interface GuardedFile {
  /** Relative path, for the merge rules and messages. */
  readonly path: string;
  readonly target: string;
  /** The staged new bytes; rewritten in place (temp + rename) when bytes are merged in. */
  readonly staged: string;
  /** Where the bytes the new ones were built from are staged, rewritten with them (for recovery). */
  readonly baseFile: string;
  /** The bytes the new ones were built from; null: the file did not exist. */
  readonly base: string | null;
  readonly content: string;
}

/** A replaced file whose old inode is still open, for `recheckLate`. */
export interface HeldOldFile {
  readonly file: GuardedFile;
  readonly handle: FileHandle;
  /** The old file's bytes at the last read. */
  readonly seen: string;
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
    };

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

/** Replace `file` by temp + rename (staging files too are never half-written). */
async function rewrite(file: string, content: string): Promise<void> {
  const temporary = `${file}.next`;
  await unlink(temporary).catch(() => undefined);
  await writeFile(temporary, content, { flag: 'wx' });
  await rename(temporary, file);
}

/** Stage merged bytes: the new content first, then its base, so recovery never pairs an old content with a newer base. */
async function restage(file: GuardedFile, base: string | null, content: string): Promise<void> {
  await rewrite(file.staged, content);
  await rewrite(file.baseFile, serializeBase(base));
}

/** Bytes staged as a base (see `restage`); undefined when unreadable (an older staging format). */
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

function deferred(file: GuardedFile, seen: string | null, content: string, why: string): ReplaceOutcome {
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
 * Bytes arrived in the old file after the rename and cannot be merged: the person's version goes back in
 * place (through the staging name, so it is one rename) and the file is deferred.
 */
async function putBack(file: GuardedFile, theirs: string, content: string): Promise<ReplaceOutcome> {
  await rewrite(file.staged, theirs);
  await rename(file.staged, file.target);
  return deferred(file, theirs, content, 'was changed in a way that cannot be merged');
}

/** Replace the target with the staged bytes, merging what arrived before and after the rename (see the header). */
export async function guardedReplace(
  file: GuardedFile,
  observe?: WindowObserver,
): Promise<ReplaceOutcome> {
  let base = file.base;
  let content = file.content;
  let lastSeen: string | null = base;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const handle = await openNoFollow(file.target);
    let keep = false;
    try {
      const seen = handle === undefined ? null : await readWhole(handle);
      const checkedAt = performance.now();
      lastSeen = seen;
      if (seen !== base) {
        const merged = mergeArrived(file.path, base, seen, content);
        if (merged === undefined)
          return deferred(file, seen, content, 'was changed in a way that cannot be merged');
        content = merged;
        base = seen;
        await restage(file, base, content);
        continue;
      }
      await rename(file.staged, file.target);
      observe?.(performance.now() - checkedAt);
      if (handle === undefined) return { status: 'replaced', content, held: undefined };
      const after = await readWhole(handle);
      if (after === seen) {
        keep = true;
        return { status: 'replaced', content, held: { file, handle, seen, content } };
      }
      // An appender wrote into the old file after the check: merge its bytes and replace again.
      const merged = mergeArrived(file.path, seen, after, content);
      if (merged === undefined) return putBack(file, after, content);
      base = content;
      content = merged;
      await restage(file, base, content);
    } finally {
      if (!keep) await handle?.close();
    }
  }
  return deferred(file, lastSeen, content, `kept changing (${MAX_ATTEMPTS} attempts)`);
}

/**
 * The last look at a replaced file's old inode, after the directory fsync: bytes a slow writer put there are
 * merged and the target replaced again (with the same checks). Closes the handle.
 */
export async function recheckLate(held: HeldOldFile, observe?: WindowObserver): Promise<ReplaceOutcome> {
  let after: string;
  try {
    after = await readWhole(held.handle);
  } finally {
    await held.handle.close();
  }
  if (after === held.seen) return { status: 'replaced', content: held.content, held: undefined };
  const merged = mergeArrived(held.file.path, held.seen, after, held.content);
  if (merged === undefined) return putBack(held.file, after, held.content);
  await restage(held.file, held.content, merged);
  const outcome = await guardedReplace({ ...held.file, base: held.content, content: merged }, observe);
  if (outcome.status === 'replaced' && outcome.held !== undefined) await outcome.held.handle.close();
  return outcome.status === 'replaced' ? { ...outcome, held: undefined } : outcome;
}
