import { lstatSync, type Stats } from 'node:fs';
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TranscriptErrorReason, errorMessage } from '../errors.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * Where a transcript file really is, and the refusal of anything that leads out of the sessions directory
 * (a `..` in the name, a symbolic link to elsewhere, a dangling link that points out).
 */

/** True when `path` is strictly inside `directory` (both absolute and normalized). */
export function isInsideDirectory(directory: string, path: string): boolean {
  const relation = relative(directory, path);
  return relation !== '' && relation !== '..' && !relation.startsWith(`..${sep}`) && !isAbsolute(relation);
}

/** Resolves the file's real path and refuses anything that leads outside the real sessions directory. */
export async function resolveInside(
  path: string,
  sessionsDir: string,
  knownRealDirectory?: string,
): Promise<string> {
  if (!isInsideDirectory(sessionsDir, path)) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.outsideDirectory,
      `the path leads outside the sessions directory ${sessionsDir}`,
    );
  }
  let realDirectory: string;
  try {
    realDirectory = knownRealDirectory ?? (await realpath(sessionsDir));
  } catch (error) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.unreadable,
      `the sessions directory cannot be read (${errorMessage(error)})`,
      error,
    );
  }
  let realFile: string;
  try {
    realFile = await realpath(path);
  } catch (error) {
    const danglingTarget = await symlinkTarget(path);
    if (
      danglingTarget !== undefined &&
      !isInsideDirectory(realDirectory, danglingTarget) &&
      !isInsideDirectory(sessionsDir, danglingTarget)
    ) {
      throw transcriptFailure(
        path,
        TranscriptErrorReason.outsideDirectory,
        `it is a symbolic link to ${danglingTarget}, outside the sessions directory`,
        error,
      );
    }
    throw transcriptFailure(
      path,
      TranscriptErrorReason.unreadable,
      `the file cannot be opened (${errorMessage(error)})`,
      error,
    );
  }
  if (!isInsideDirectory(realDirectory, realFile)) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.outsideDirectory,
      `it resolves to ${realFile}, outside the sessions directory ${realDirectory}`,
    );
  }
  return realFile;
}

/** Where a symbolic link points (resolved against its directory), or undefined when `path` is not a link. */
async function symlinkTarget(path: string): Promise<string | undefined> {
  try {
    const link = await lstat(path);
    if (!link.isSymbolicLink()) return undefined;
    return resolve(dirname(path), await readlink(path));
  } catch {
    return undefined;
  }
}

/** `stat`, or a TranscriptError of `reason` naming `shownPath`. */
export async function statOrFail(
  path: string,
  shownPath: string,
  reason: TranscriptErrorReason,
  what: string,
): Promise<Stats> {
  try {
    return await stat(path);
  } catch (error) {
    throw transcriptFailure(shownPath, reason, `${what} (${errorMessage(error)})`, error);
  }
}

/**
 * The common case in one synchronous `lstat`: a regular file (not a link) directly inside the sessions directory is
 * `<real sessions directory>/<name>`, so it needs no `realpath` of its own. Undefined for anything else (a
 * link, a subdirectory, a missing file, a directory that cannot be resolved): the caller then resolves the
 * path in full, which also words the error.
 */
export async function locateDirectFile(
  path: string,
  sessionsDir: string,
  knownRealDirectory: string | undefined,
): Promise<{ realFile: string; before: Stats } | undefined> {
  if (dirname(path) !== sessionsDir || !isInsideDirectory(sessionsDir, path)) return undefined;
  try {
    const realFile = join(knownRealDirectory ?? (await realpath(sessionsDir)), basename(path));
    // Synchronous, as the scan's stat: one metadata call, microseconds for a cached inode (see
    // SYNC_READ_MAX_BYTES in transcript-bytes.ts).
    const before = lstatSync(realFile);
    return before.isFile() ? { realFile, before } : undefined;
  } catch {
    return undefined;
  }
}
