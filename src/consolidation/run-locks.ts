/**
 * The locks a run holds: dreamd's space lock (with its heartbeat and fence) and, in a claude-code space,
 * Claude Code's own `.consolidate-lock`, taken after dreamd's and released before it; busy means a
 * LockBusyError and nothing written (space/claude-code-lock.ts). A dry run takes none.
 */
import { acquireLock, recoverMemory, type HeartbeatTimer, type HeldLock } from '../space/index.js';
import { acquireClaudeCodeLockFor, type HeldClaudeCodeLock } from '../space/claude-code-lock.js';
import type { RunContext } from './run-context.js';

/** The locks of a run; both undefined in a dry run. */
export interface RunLocks {
  readonly lock: HeldLock | undefined;
  readonly claudeCodeLock: HeldClaudeCodeLock | undefined;
}

/**
 * Takes the run's locks, then finishes or discards an interrupted earlier transaction: only under the lock,
 * since a transaction staged by a live holder must not be touched.
 */
export async function takeRunLocks(
  ctx: RunContext,
  holder: { readonly owner: string; readonly timer: HeartbeatTimer | undefined },
): Promise<RunLocks> {
  const { space, request, now } = ctx;
  if (request.dryRun) return { lock: undefined, claudeCodeLock: undefined };
  const lock = await acquireLock(space.memoryDir, {
    owner: request.jobId !== undefined ? `${holder.owner} job ${request.jobId}` : holder.owner,
    staleMs: ctx.config.limits.lockStaleMinutes * 60_000,
    now,
    space: space.id,
    ...(holder.timer !== undefined ? { timer: holder.timer } : {}),
  });
  const claudeCodeLock = await acquireClaudeCodeLockFor(space, { now }).catch(async (error: unknown) => {
    await lock.release();
    throw error;
  });
  const locks = { lock, claudeCodeLock };
  // A recovery that fails (a damaged staging folder) ends the run with its locks released: the next run
  // meets the same folder and says the same, instead of a lock held until it goes stale.
  await recoverMemory(space.memoryDir).catch(async (error: unknown) => {
    await releaseRunLocks(locks);
    throw error;
  });
  return locks;
}

/** Releases the run's locks, Claude Code's first. */
export async function releaseRunLocks(locks: RunLocks): Promise<void> {
  await locks.claudeCodeLock?.release();
  await locks.lock?.release();
}
