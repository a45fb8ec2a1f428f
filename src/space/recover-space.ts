/**
 * Recover before anyone reads: a transaction that was committed but not fully moved into place (a run killed
 * inside its commit) is finished before memory is read, by the daemon at start, by every CLI command that
 * reads memory and by the agent's `loadMemoryContext`, so no reader sees the old ledger beside new files or
 * waits a day for the next run that passes the gates to finish it.
 *
 * Outcomes:
 * It also undoes a hold of Claude Code's `.consolidate-lock` that a killed run left (claude-code-hold.ts): the
 * lock's previous mtime, Claude Code's "last consolidation" time, is put back.
 *
 *   clean       nothing committed is pending and no hold is left over (the common case: two readdirs and one
 *               stat; lock temp files of dead processes removed); nothing was locked. Also when only a hold record exists and its run is still live
 *   recovered   the lock was taken, every committed transaction finished and every uncommitted one discarded
 *   busy        a live run holds the lock: it is committing right now and finishes its own transaction. The
 *               commit order (files, then the index, then deletions) keeps the index from naming a missing
 *               file meanwhile
 *   unwritable  the memory directory cannot be written (read-only, no permission, disk full): nothing could be
 *               finished; `message` names the file and the fix; memory is read as it is
 */
import { hostname } from 'node:os';
import { LockBusyError } from '../errors.js';
import { StorageError, describeIoError } from './io-errors.js';
import { hasHoldRecord, undoLeftoverHold } from './claude-code-hold.js';
import { acquireLock, removeDeadLockTemps } from './lock.js';
import { StateHijackError } from './state-dir.js';
import { STAGING_DIR } from './paths.js';
import { hasCommittedTransaction, recoverMemory } from './transaction.js';

/** Stale time used when the caller has no config: the default of `limits.lockStaleMinutes` (10 minutes). */
export const DEFAULT_LOCK_STALE_MS = 10 * 60_000;

export interface RecoverSpaceOptions {
  /** `limits.lockStaleMinutes` in milliseconds. Default 10 minutes. */
  readonly staleMs?: number;
  /** Lock owner shown in status while recovering. Default `dreamd recovery <pid>@<host>`. */
  readonly owner?: string;
  /** Space id for messages. */
  readonly space?: string;
  readonly now?: () => Date;
}

export type RecoverSpaceOutcome =
  | { readonly status: 'clean' }
  | {
      readonly status: 'recovered';
      readonly finished: readonly string[];
      readonly discarded: readonly string[];
      /**
       * Set when a killed run's hold of `.consolidate-lock` was undone: the mtime put back (ISO 8601), or
       * null when the file the run created was removed.
       */
      readonly claudeCodeLockRestored?: string | null;
    }
  | { readonly status: 'busy'; readonly holder: string }
  | { readonly status: 'unwritable'; readonly message: string };

/** Finish a committed, unfinished transaction of this memory directory under its lock (see the outcomes). */
export async function recoverSpace(
  memoryDir: string,
  options: RecoverSpaceOptions = {},
): Promise<RecoverSpaceOutcome> {
  // Temp files of a lock taker killed mid-acquisition go even when nothing else is to recover (one readdir).
  const [committed, held] = await Promise.all([
    hasCommittedTransaction(memoryDir),
    hasHoldRecord(memoryDir),
    removeDeadLockTemps(memoryDir).catch(() => []),
  ]);
  if (!committed && !held) return { status: 'clean' };
  let lock;
  try {
    lock = await acquireLock(memoryDir, {
      owner: options.owner ?? `dreamd recovery ${process.pid}@${hostname()}`,
      staleMs: options.staleMs ?? DEFAULT_LOCK_STALE_MS,
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.space !== undefined ? { space: options.space } : {}),
    });
  } catch (error) {
    // A live run holds the lock: a hold record alone is that run's own, not something to recover.
    if (error instanceof LockBusyError && !committed) return { status: 'clean' };
    if (error instanceof LockBusyError)
      return { status: 'busy', holder: error.holder?.owner ?? 'another process' };
    if (error instanceof StorageError || error instanceof StateHijackError)
      return { status: 'unwritable', message: error.message };
    throw error;
  }
  try {
    const undone = await undoLeftoverHold(memoryDir);
    const report = await recoverMemory(memoryDir);
    return {
      status: 'recovered',
      finished: report.finished,
      discarded: report.discarded,
      ...(undone === undefined
        ? {}
        : {
            claudeCodeLockRestored:
              undone.restoredMtimeMs === null ? null : new Date(undone.restoredMtimeMs).toISOString(),
          }),
    };
  } catch (error) {
    const described = describeIoError(error, STAGING_DIR, 'finish an interrupted commit');
    if (described instanceof StorageError || described instanceof StateHijackError)
      return { status: 'unwritable', message: described.message };
    throw described;
  } finally {
    await lock.release();
  }
}
