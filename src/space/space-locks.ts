/**
 * Taking a space's locks, written once for every writer (a run, accept/reject, rollback and forget, the
 * agent's notes, `sessions exclude`):
 *
 * 1. dreamd's space lock (`lock.ts`, with its heartbeat and fence);
 * 2. Claude Code's `.consolidate-lock` where Claude Code also consolidates the folder (`claude-code-lock.ts`),
 *    unless the caller leaves it out (`claudeCode: false`);
 * 3. a transaction a crashed run left behind finished or discarded (`recoverMemory`), only under the locks,
 *    since a transaction staged by a live holder must not be touched; `recover: false` skips it.
 *
 * Whatever was taken is released in reverse order (Claude Code's before dreamd's), when a later step fails and
 * when the action ends, thrown or not; a release that throws does not keep the earlier ones from running
 * (graphile-worker's `withReleasers`). A busy lock is a LockBusyError naming its holder, with nothing written.
 */
import { hostname } from 'node:os';
import type { Space } from '../config/schema.js';
import { acquireClaudeCodeLockFor, type HeldClaudeCodeLock } from './claude-code-lock.js';
import { acquireLock, type HeartbeatTimer, type HeldLock } from './lock.js';
import { recoverMemory } from './transaction.js';

/**
 * What the locks need of a space: its folder and id, and what says whether Claude Code shares the folder (its
 * format, sources, repository; without them, only a `.consolidate-lock` in the folder does).
 */
export type LockedSpace = Pick<Space, 'id' | 'memoryDir'> &
  Partial<Pick<Space, 'format' | 'sources' | 'repository'>>;

export interface SpaceLockOptions {
  /** Who holds dreamd's lock, as written into it (see {@link lockOwner}). */
  readonly owner: string;
  /** A lock whose heartbeat is older than this is stale, in milliseconds (`limits.lockStaleMinutes`). */
  readonly staleMs: number;
  /** Clock for both locks; default the system clock. */
  readonly now?: (() => Date) | undefined;
  /** Heartbeat timer of dreamd's lock; default a real interval. */
  readonly timer?: HeartbeatTimer | undefined;
  /**
   * Claude Code's lock: taken where it shares the folder (default), with `command` naming what takes it in the
   * busy message (default a consolidation run); `false` leaves it alone.
   */
  readonly claudeCode?: false | { readonly command?: string | undefined } | undefined;
  /** Finish or discard an interrupted transaction once the locks are held. Default true. */
  readonly recover?: boolean | undefined;
}

/** A space's locks, held until `release`. */
export interface HeldSpaceLocks {
  readonly lock: HeldLock;
  /** Claude Code's lock, when it was taken. */
  readonly claudeCodeLock: HeldClaudeCodeLock | undefined;
  /** Releases what was taken, Claude Code's lock first. Safe to call twice. */
  release(): Promise<void>;
}

/** The owner written into dreamd's lock for a command of this process: `dreamd <command> <pid>@<host>`. */
export function lockOwner(command: string): string {
  return `dreamd ${command} ${process.pid}@${hostname()}`;
}

/**
 * Runs each release, last first, even when one throws; the first error thrown is thrown at the end. Each is
 * taken off the list as it runs, so a second call releases nothing twice.
 */
export async function releaseInReverse(releases: (() => Promise<void>)[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (let release = releases.pop(); release !== undefined; release = releases.pop()) {
    try {
      await release();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== undefined) throw failure.error;
}

/**
 * Takes the space's locks in order and recovers an interrupted transaction; when a step fails, what was taken
 * is released in reverse and the error is thrown. The caller releases the result in a `finally`.
 */
export async function acquireSpaceLocks(
  space: LockedSpace,
  options: SpaceLockOptions,
): Promise<HeldSpaceLocks> {
  const releases: (() => Promise<void>)[] = [];
  const release = (): Promise<void> => releaseInReverse(releases);
  try {
    const lock = await acquireLock(space.memoryDir, {
      owner: options.owner,
      staleMs: options.staleMs,
      space: space.id,
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.timer !== undefined ? { timer: options.timer } : {}),
    });
    releases.push(() => lock.release());
    const claudeCodeLock =
      options.claudeCode === false
        ? undefined
        : await acquireClaudeCodeLockFor(space, { command: options.claudeCode?.command, now: options.now });
    if (claudeCodeLock !== undefined) releases.push(() => claudeCodeLock.release());
    if (options.recover !== false) await recoverMemory(space.memoryDir);
    return { lock, claudeCodeLock, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/** Runs `action` holding the space's locks (see {@link acquireSpaceLocks}), and releases them in reverse after. */
export async function withSpaceLocks<T>(
  space: LockedSpace,
  options: SpaceLockOptions,
  action: (locks: HeldSpaceLocks) => Promise<T>,
): Promise<T> {
  const locks = await acquireSpaceLocks(space, options);
  try {
    return await action(locks);
  } finally {
    await locks.release();
  }
}
