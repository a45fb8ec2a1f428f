/**
 * Claude Code's own consolidation lock, `<memory dir>/.consolidate-lock`, taken by dreamd in a `claude-code`
 * space (together with, and after, dreamd's own `.dreamd/lock`) so that Claude Code's "auto-dream" and dreamd
 * never write one memory folder at once. The protocol is Claude Code's, not ours:
 *
 * - the body is the PID of the holder; the file's mtime is the time of the last consolidation (Claude Code's
 *   24-hour gate reads it with one `stat`);
 * - a lock whose mtime is less than an hour old and whose PID is a live process is held; older than an hour,
 *   or with a dead PID or an empty body, it is free, whatever its body says;
 * - a taker writes its PID and reads the file back: another PID there means another taker won the race;
 * - a failed consolidation writes an empty body and puts the previous mtime back (or removes the file when
 *   there was none), so the 24-hour gate does not count a run that changed nothing.
 *
 * States of the file, as this module sees it:
 *   absent        never consolidated: `acquire` creates it with our PID (`priorMtimeMs` undefined)
 *   free          body empty, not a live PID, our own PID (a run of ours that ended; dreamd's own lock is held,
 *                 so no other run of this process is on this folder), or mtime over an hour old: taken
 *   held          another live process's PID and an mtime within the hour: `acquire` throws
 *                 ClaudeCodeLockBusyError (a LockBusyError: a job waits and retries, a manual run says busy),
 *                 having written nothing
 *   ours          while a run works: `refresh` (every `heartbeatMs`, 10 min) touches the mtime so Claude Code
 *                 never sees our hold as over an hour old (for at most 4 hours); `confirm` (before the commit) re-reads the body and
 *                 throws ClaudeCodeLockBusyError if another process took it meanwhile
 *   released      body emptied (an empty body is Claude Code's own "free", which its rollback writes) and the
 *                 mtime set to the commit time after `consolidated()`, else the previous mtime put back
 *   left over     the process died holding it: the hold record (`claude-code-hold.ts`) written before the PID
 *                 lets the next taker of dreamd's lock, or the recovery, put the previous mtime back
 *
 * dreamd clears the body on success where Claude Code leaves its PID: dreamd is a long-lived daemon, and its
 * PID left behind would keep Claude Code (and dreamd's other workers) out for an hour after every run.
 *
 * Limits: the PID check only means something on the same host and in the same PID namespace. dreamd in a
 * container and Claude Code on the host cannot see each other's processes; each then treats the other's lock
 * as free once its holder looks dead, and `confirm` is what stops dreamd from committing over a taker.
 */
import { mkdir, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hostname } from 'node:os';
import type { Space } from '../config/schema.js';
import { LockBusyError } from '../errors.js';
import {
  CLAUDE_CODE_LOCK_FILE,
  CLAUDE_CODE_LOCK_STALE_MS,
  holderPidOf,
  isErrno,
  isProcessRunning,
  readLockFile,
  removeHoldRecord,
  sharesClaudeCodeLock,
  undoLeftoverHold,
  writeHoldRecord,
} from './claude-code-hold.js';

export { CLAUDE_CODE_LOCK_FILE, CLAUDE_CODE_LOCK_STALE_MS } from './claude-code-hold.js';

/**
 * How often a held lock's mtime is touched: 10 minutes, a sixth of the stale limit, so a run paused for up to
 * 50 minutes (a busy host, a slow model call) still looks alive to Claude Code.
 */
export const CLAUDE_CODE_LOCK_HEARTBEAT_MS = 10 * 60_000;

/**
 * Longest the heartbeat keeps a lock alive: 4 hours, over twice the longest run the defaults allow (20 calls
 * × 60 s timeout × 5 attempts ≈ 100 minutes). A hold never released (a crash between take and `finally`) then
 * goes stale an hour later instead of keeping Claude Code out for as long as the daemon lives.
 */
export const CLAUDE_CODE_LOCK_MAX_HOLD_MS = 4 * 60 * 60_000;

/** Another process (Claude Code's auto-dream, or a tool using its lock) holds `.consolidate-lock`. */
export class ClaudeCodeLockBusyError extends LockBusyError {
  /** Which lock was busy: this one, not dreamd's own. */
  readonly lock = 'claude-code' as const;
  constructor(
    message: string,
    space: string,
    /** PID in the lock file. */
    readonly holderPid: number,
    /** When the holder took it (the file's mtime), ISO 8601. */
    readonly since: string,
  ) {
    super(message, space, {
      owner: 'Claude Code (.consolidate-lock)',
      pid: holderPid,
      host: hostname(),
      startedAt: since,
    });
  }
}

export interface ClaudeCodeLockOptions {
  /** Space id for messages; default the memory directory. */
  readonly space?: string | undefined;
  /** Clock; default the system clock. */
  readonly now?: (() => Date) | undefined;
  /** PID written to the lock; default `process.pid`. */
  readonly pid?: number | undefined;
  /** Whether a PID is a running process; default `process.kill(pid, 0)` (EPERM counts as running). */
  readonly isRunning?: ((pid: number) => boolean) | undefined;
  /** Interval of the mtime heartbeat in ms; default `CLAUDE_CODE_LOCK_HEARTBEAT_MS`; 0 turns it off. */
  readonly heartbeatMs?: number | undefined;
  /**
   * The command that takes the lock (`rollback`, `memory forget`), for the busy message; default a
   * consolidation run, which is retried later.
   */
  readonly command?: string | undefined;
}

export interface HeldClaudeCodeLock {
  /** The mtime the file had before we took it (ms since the epoch), or undefined when it did not exist. */
  readonly priorMtimeMs: number | undefined;
  /** Touches the mtime, if the body is still ours (what the heartbeat runs). */
  refresh(): Promise<void>;
  /** Throws ClaudeCodeLockBusyError unless the body is still our PID: call it just before committing. */
  confirm(): Promise<void>;
  /** Marks the run as consolidated at `at` (default now): `release` then leaves that as the mtime. */
  consolidated(at?: Date): void;
  /** Empties the body and sets the mtime (see the states above), if the lock is still ours. Safe twice. */
  release(): Promise<void>;
}

/**
 * Takes `.consolidate-lock` in `memoryDir` by Claude Code's protocol. Throws ClaudeCodeLockBusyError, having
 * written nothing, when another live process holds it, and after writing when another taker won the race.
 * The caller must `release()` it in a `finally`.
 */
export async function acquireClaudeCodeLock(
  memoryDir: string,
  options: ClaudeCodeLockOptions = {},
): Promise<HeldClaudeCodeLock> {
  const now = options.now ?? (() => new Date());
  const pid = options.pid ?? process.pid;
  const isRunning = options.isRunning ?? isProcessRunning;
  const space = options.space ?? memoryDir;
  const file = path.join(memoryDir, CLAUDE_CODE_LOCK_FILE);
  const busy = (holderPid: number, mtimeMs: number, detail: string): ClaudeCodeLockBusyError => {
    const since = new Date(mtimeMs).toISOString();
    const next =
      options.command === undefined
        ? 'dreamd wrote nothing and tries again later. To run only one consolidator, set "autoDreamEnabled": ' +
          "false in Claude Code's settings"
        : `dreamd ${options.command} wrote nothing. Run it again when Claude Code is done: the lock is free ` +
          `once pid ${holderPid} ends, or an hour after ${since}`;
    return new ClaudeCodeLockBusyError(
      `${space}: ${detail} (${CLAUDE_CODE_LOCK_FILE} holds pid ${holderPid}, since ${since}); ${next}`,
      space,
      holderPid,
      since,
    );
  };

  // A hold of dreamd's that a killed process left (the caller holds dreamd's lock): its mtime is put back first.
  await undoLeftoverHold(memoryDir, { pid, isRunning });
  const prior = await readLockFile(file);
  if (prior !== undefined && now().getTime() - prior.mtimeMs < CLAUDE_CODE_LOCK_STALE_MS) {
    const holder = holderPidOf(prior.body);
    if (holder !== undefined && holder !== pid && isRunning(holder)) {
      throw busy(holder, prior.mtimeMs, 'Claude Code is consolidating this memory folder');
    }
  }
  // Recorded before the PID is written, so a process killed at any point after leaves what undoes its hold.
  await writeHoldRecord(memoryDir, {
    pid,
    priorMtimeMs: prior?.mtimeMs ?? null,
    takenAt: now().toISOString(),
  });
  await writeFile(file, String(pid)).catch(async (error: unknown) => {
    if (!isErrno(error, 'ENOENT')) throw error;
    await mkdir(memoryDir, { recursive: true });
    await writeFile(file, String(pid));
  });
  const written = await readLockFile(file);
  const winner = written === undefined ? undefined : holderPidOf(written.body);
  if (winner !== pid) {
    await removeHoldRecord(memoryDir);
    throw busy(
      winner ?? 0,
      written?.mtimeMs ?? now().getTime(),
      'another process took the lock at the same moment',
    );
  }

  let consolidatedAt: Date | undefined;
  let released = false;
  const isOurs = async (): Promise<{ body: string; mtimeMs: number } | undefined> => {
    const current = await readLockFile(file);
    return current !== undefined && holderPidOf(current.body) === pid ? current : undefined;
  };
  const heartbeatMs = options.heartbeatMs ?? CLAUDE_CODE_LOCK_HEARTBEAT_MS;
  const refresh = async (): Promise<void> => {
    if (released || (await isOurs()) === undefined) return;
    const at = now();
    await utimes(file, at, at);
  };
  const takenAt = now().getTime();
  const timer =
    heartbeatMs > 0
      ? setInterval(() => {
          if (now().getTime() - takenAt > CLAUDE_CODE_LOCK_MAX_HOLD_MS) clearInterval(timer);
          else refresh().catch(() => undefined);
        }, heartbeatMs)
      : undefined;
  timer?.unref();

  return {
    priorMtimeMs: prior?.mtimeMs,
    refresh,
    async confirm() {
      if ((await isOurs()) !== undefined) return;
      const current = await readLockFile(file);
      throw busy(
        current === undefined ? 0 : (holderPidOf(current.body) ?? 0),
        current?.mtimeMs ?? now().getTime(),
        'another process took the lock while this run worked',
      );
    },
    consolidated(at) {
      consolidatedAt = at ?? now();
    },
    async release() {
      if (released) return;
      released = true;
      if (timer !== undefined) clearInterval(timer);
      if ((await isOurs()) !== undefined) {
        if (consolidatedAt === undefined && prior === undefined) {
          await unlink(file).catch(() => undefined);
        } else {
          await writeFile(file, '');
          // In seconds, so the previous mtime comes back to the microsecond, not cut to the millisecond.
          const seconds = (consolidatedAt?.getTime() ?? prior?.mtimeMs ?? 0) / 1000;
          await utimes(file, seconds, seconds);
        }
      }
      await removeHoldRecord(memoryDir);
    },
  };
}

/**
 * `acquireClaudeCodeLock` for a space whose memory Claude Code also consolidates: a `claude-code` space, or any
 * space whose memory folder holds a `.consolidate-lock`; undefined for any other space, which has no such lock.
 * Every command that rewrites memory takes it through here, after dreamd's own lock.
 */
export async function acquireClaudeCodeLockFor(
  space: Parameters<typeof sharesClaudeCodeLock>[0] & Pick<Space, 'id'>,
  options: Omit<ClaudeCodeLockOptions, 'space'> = {},
): Promise<HeldClaudeCodeLock | undefined> {
  if (!(await sharesClaudeCodeLock(space))) return undefined;
  return acquireClaudeCodeLock(space.memoryDir, { ...options, space: space.id });
}
