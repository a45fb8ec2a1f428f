/**
 * Files parsed once per change. The scheduler's tick looks at every space: its ledger and its last run record
 * change only when a run commits, yet each tick read and validated them again (a ledger of 1,000 sessions and
 * a run record with the bytes it replaced, in each of 100 spaces). A reader made here keeps what it parsed of
 * each path while the file stays the same file with the same bytes, as a stat tells: the same inode (a file
 * replaced by rename, as dreamd writes the ledger, has another), size, and modification and change times in
 * nanoseconds (a write in place changes them). A tick then costs a stat per file.
 */
import { readFile, stat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { readTextIfExists } from './paths.js';

/** Paths kept at the most; past it the reader forgets them all and starts again (a daemon's spaces fit). */
const KEPT_PATHS = 10_000;

/** What identifies a file's bytes without reading them. */
function identity(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

async function statIfExists(path: string): Promise<BigIntStats | undefined> {
  try {
    return await stat(path, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * A reader of `path` parsed with `parse` (null when there is no file), parsing each file again only when it
 * changed. What `parse` throws is thrown, and nothing is kept of it. The value is shared between reads: treat
 * it as read-only.
 */
export type ParsedFileReader<T> = (path: string) => Promise<T | null>;

/** The same reader keeping nothing: each read reads and parses the file (null when there is none). */
export function readParsedOnce<T>(parse: (text: string, path: string) => T): ParsedFileReader<T> {
  return async (path) => {
    const text = await readTextIfExists(path);
    return text === null ? null : parse(text, path);
  };
}

export function createParsedFileReader<T>(parse: (text: string, path: string) => T): ParsedFileReader<T> {
  const kept = new Map<string, { readonly identity: string; readonly value: T }>();
  return async (path) => {
    const before = await statIfExists(path);
    if (before === undefined) {
      kept.delete(path);
      return null;
    }
    const known = kept.get(path);
    if (known?.identity === identity(before)) return known.value;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const value = parse(text, path);
    // Kept only when the file did not change while it was read: else the next read parses it again.
    const after = await statIfExists(path);
    if (after !== undefined && identity(after) === identity(before)) {
      if (kept.size >= KEPT_PATHS) kept.clear();
      kept.set(path, { identity: identity(before), value });
    } else kept.delete(path);
    return value;
  };
}
