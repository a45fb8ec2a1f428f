/**
 * File-system errors a person can act on (a full disk, a read-only mount, missing permission), turned into a
 * message that names the file, what dreamd was doing and the fix. Other errors pass through unchanged, so
 * callers can still branch on `code` (ENOENT, EEXIST).
 */
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { DreamdError } from '../errors.js';

/** A write to a memory directory failed for a reason outside dreamd. `code` is the errno code. */
export class StorageError extends DreamdError {
  override readonly name = 'StorageError';
  constructor(
    message: string,
    readonly file: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const FIXES: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full; free space on it (or move the memory directory) and run again',
  EDQUOT: 'the disk quota is used up; free space or raise the quota and run again',
  EROFS:
    'the file system is mounted read-only; remount it read-write (or point the space at a writable directory)',
  EACCES: 'permission denied; give the user running dreamd write access to the memory directory',
  EPERM: 'operation not permitted; give the user running dreamd write access to the memory directory',
};

/** True for the errno codes `describeIoError` explains. */
export function isStorageProblem(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && code in FIXES;
}

/**
 * The error to throw for a failed file operation: a StorageError naming `file`, `action` and the fix for a
 * full disk, a read-only file system or missing permission; the original error otherwise.
 */
export function describeIoError(error: unknown, file: string, action: string): unknown {
  if (error instanceof StorageError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const fix = code === undefined ? undefined : FIXES[code];
  if (code === undefined || fix === undefined) return error;
  return new StorageError(`${file}: could not ${action} (${code}): ${fix}`, file, code, { cause: error });
}

/**
 * Why dreamd could not write `directory` (read-only file system, no permission), naming it and the fix; undefined
 * when it can. A directory that does not exist yet is judged by its nearest existing parent (a run creates it).
 */
export async function memoryWriteProblem(directory: string): Promise<string | undefined> {
  let target = directory;
  for (;;) {
    try {
      await access(target, constants.W_OK);
      return undefined;
    } catch (error) {
      const parent = path.dirname(target);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && parent !== target) {
        target = parent;
        continue;
      }
      const described = describeIoError(error, target, 'write memory here');
      return described instanceof Error ? described.message : String(described);
    }
  }
}
