/**
 * The locks a run holds: dreamd's space lock (with its heartbeat and fence) and, in a claude-code space,
 * Claude Code's own `.consolidate-lock`, taken after dreamd's and released before it; busy means a
 * LockBusyError and nothing written (space/claude-code-lock.ts). A dry run takes none.
 */
import { acquireSpaceLocks, type HeartbeatTimer, type HeldLock } from '../space/index.js';
import type { HeldClaudeCodeLock } from '../space/claude-code-lock.js';
import type { RunContext } from './run-context.js';

/** The locks of a run; both undefined in a dry run. */
export interface RunLocks {
  readonly lock: HeldLock | undefined;
  readonly claudeCodeLock: HeldClaudeCodeLock | undefined;
  /** Releases what was taken, Claude Code's lock first. */
  release(): Promise<void>;
}

const NO_LOCKS: RunLocks = { lock: undefined, claudeCodeLock: undefined, release: () => Promise.resolve() };

/**
 * Takes the run's locks, then finishes or discards an interrupted earlier transaction: only under the lock,
 * since a transaction staged by a live holder must not be touched. A recovery that fails (a damaged staging
 * folder) ends the run with its locks released: the next run meets the same folder and says the same, instead
 * of a lock held until it goes stale.
 */
export async function takeRunLocks(
  ctx: RunContext,
  holder: { readonly owner: string; readonly timer: HeartbeatTimer | undefined },
): Promise<RunLocks> {
  const { space, request, now } = ctx;
  if (request.dryRun) return NO_LOCKS;
  return acquireSpaceLocks(space, {
    owner: request.jobId !== undefined ? `${holder.owner} job ${request.jobId}` : holder.owner,
    staleMs: ctx.config.limits.lockStaleMinutes * 60_000,
    now,
    timer: holder.timer,
  });
}

/** Releases the run's locks, Claude Code's first. */
export async function releaseRunLocks(locks: RunLocks): Promise<void> {
  await locks.release();
}
