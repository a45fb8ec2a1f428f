/**
 * The per-space lock (`.dreamd/lock`): at most one run writes a memory directory at a time, and a run that lost
 * its lock does not write (fencing).
 *
 * The lock file holds who took it and a random token; its mtime is the holder's heartbeat, renewed every
 * `heartbeatMs` by a timer that runs for as long as the lock is held (model calls included: they are awaited
 * I/O, so the timer fires during them). A renewal opens the file, checks the token and sets the mtime through
 * the same open handle, so it can only ever touch the file it verified, never a lock someone else created.
 *
 * States of the lock file:
 *   absent   free: `acquireLock` creates it with complete content in one step (hard link of a fully
 *            written temp file, which fails when the name exists, like open with `wx` but never half-written)
 *   held     a live holder (its heartbeat is younger than `staleMs`): `acquireLock` throws LockBusyError with
 *            the holder's data, however long the holder has been running
 *   stale    the holder is on this host and its pid is dead, or its heartbeat stopped more than `staleMs` ago:
 *            taken over under a short-lived takeover mutex (`.dreamd/lock.takeover`), which re-reads the
 *            lock, removes it only if it is still the same stale one, then creates ours; two takers cannot
 *            both win because the final create is exclusive
 * States of a HeldLock: `held` → `lost` (a renewal or `assertHeld` found another token, or no lock) or
 * `released`. A lost lock is never renewed again. `assertHeld()` is the fence a run calls just before its
 * commit point: it renews the heartbeat when the lock is still ours (so the commit has a full `staleMs` of
 * margin) and throws LockLostError when it is not.
 * `release()` stops the heartbeat and removes the lock only when it still carries our token.
 * A process killed (kill -9) between writing its temp file and removing it leaves `.dreamd/lock.<pid>.<hex>.tmp`
 * (or `lock.takeover.<pid>.<hex>.tmp`): the next acquisition, and recovery, remove those whose pid is gone
 * (see `removeDeadLockTemps`).
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LockBusyError, LockLostError } from '../errors.js';
import { LOCK_FILE, STATE_DIR } from './paths.js';
import { describeIoError } from './io-errors.js';
import { assertStateIsOwn } from './state-dir.js';

export const LockInfo = z.object({
  owner: z.string(),
  pid: z.number().int(),
  host: z.string(),
  startedAt: z.string(),
  token: z.string(),
});
export type LockInfo = z.infer<typeof LockInfo>;

/** A lock as read from disk: its content and its last heartbeat (the file's mtime). */
export interface LockState extends LockInfo {
  /** ISO time of the holder's last heartbeat. */
  readonly heartbeatAt: string;
}

/**
 * Calls `beat` every `everyMs` until the returned function is called. The default uses `setInterval`, unref'd
 * so a forgotten lock never keeps a process alive. Tests pass their own to drive (or withhold) heartbeats.
 */
export type HeartbeatTimer = (beat: () => Promise<void>, everyMs: number) => () => void;

export interface AcquireLockOptions {
  /** Who holds it, for status output (e.g. "worker 3", "dreamd consolidate"). */
  readonly owner: string;
  /**
   * A lock whose heartbeat is older than this (milliseconds) is stale, whoever holds it and however long
   * it has been held (`limits.lockStaleMinutes`, default 10 minutes).
   */
  readonly staleMs: number;
  /** Milliseconds between heartbeats. Default `defaultHeartbeatMs(staleMs)`. */
  readonly heartbeatMs?: number;
  /** Heartbeat scheduler; default `setInterval` (see HeartbeatTimer). */
  readonly timer?: HeartbeatTimer;
  /** Clock, also used for the heartbeat's mtime; default the system clock. */
  readonly now?: () => Date;
  /** Space id for the error message; default the memory directory. */
  readonly space?: string;
}

export interface HeldLock {
  readonly info: LockInfo;
  /** True once a renewal or `assertHeld` found that the lock is no longer ours. */
  readonly isLost: () => boolean;
  /** Renew the heartbeat if the lock is still ours; false (and the lock is lost) when it is not. */
  renew(): Promise<boolean>;
  /** The fence before a commit: renews the heartbeat, or throws LockLostError naming who holds it now. */
  assertHeld(): Promise<void>;
  /** Stop the heartbeat and remove the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/** A takeover mutex older than this is from a crashed taker (a takeover takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;
/** Longest gap between heartbeats: 30 s is 20 beats inside the default 10-minute stale time. */
const MAX_HEARTBEAT_MS = 30_000;
/** Heartbeats per stale time at least: a few missed beats (a GC pause, a slow disk) never make a lock stale. */
const BEATS_PER_STALE_TIME = 4;

/** Heartbeat interval for a stale time: a quarter of it, at most 30 s. */
export function defaultHeartbeatMs(staleMs: number): number {
  return Math.max(1, Math.min(MAX_HEARTBEAT_MS, Math.floor(staleMs / BEATS_PER_STALE_TIME)));
}

const intervalTimer: HeartbeatTimer = (beat, everyMs) => {
  const handle = setInterval(() => void beat(), everyMs);
  handle.unref();
  return () => clearInterval(handle);
};

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** The lock's holder and heartbeat, for status output; undefined when the lock is free (or unreadable). */
export async function readLock(memoryDir: string): Promise<LockState | undefined> {
  const found = await readLockFile(path.join(memoryDir, LOCK_FILE));
  return found === 'missing' || found === 'unreadable' ? undefined : found;
}

function parseLockText(text: string): LockInfo | 'unreadable' {
  try {
    const parsed = LockInfo.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

async function readLockFile(file: string): Promise<LockState | 'missing' | 'unreadable'> {
  let text: string;
  let mtimeMs: number;
  try {
    // Content and mtime from one open handle: the same file, even if the lock is replaced meanwhile.
    const handle = await open(file, 'r');
    try {
      text = await handle.readFile('utf8');
      mtimeMs = (await handle.stat()).mtimeMs;
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return 'missing';
    throw error;
  }
  const info = parseLockText(text);
  return info === 'unreadable' ? info : { ...info, heartbeatAt: new Date(mtimeMs).toISOString() };
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return !isErrno(error, 'ESRCH');
  }
}

/** Why a lock is stale, or undefined when its holder may still be running. Age alone never makes it stale. */
export function staleReason(lock: LockState, now: Date, staleMs: number): string | undefined {
  if (lock.host === hostname() && !isProcessAlive(lock.pid))
    return `process ${lock.pid} on ${lock.host} is gone`;
  const beat = Date.parse(lock.heartbeatAt);
  if (Number.isNaN(beat) || now.getTime() - beat > staleMs) {
    return `no heartbeat since ${lock.heartbeatAt}, more than ${staleMs} ms ago`;
  }
  return undefined;
}

/**
 * Create `target` with `content` only if it does not exist; false when it does. The temp file is removed
 * whatever happens, also when writing it fails (a full disk leaves no 0-byte temp file behind).
 */
async function createExclusive(target: string, content: string, time?: Date): Promise<boolean> {
  const temporary = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { flag: 'wx' });
    // The heartbeat starts at the lock's creation, on the caller's clock.
    if (time !== undefined) await utimes(temporary, time, time);
    await link(temporary, target);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw describeIoError(error, target, 'take the space lock');
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** A temp file of `createExclusive` for the lock or its takeover mutex: `lock[.takeover].<pid>.<12 hex>.tmp`. */
const LOCK_TEMP = /^lock(?:\.takeover)?\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes the lock's temp files whose process is gone (a holder killed between writing and removing one);
 * returns their names. A live pid's file is an acquisition in progress and stays. Like the lock's own pid
 * check, this holds on one host and in one PID namespace: a memory folder shared with a container or another
 * host may lose an acquisition's temp file during its few milliseconds, and that acquisition fails with an I/O
 * error the caller retries. Best effort: a `.dreamd` that is missing, a link or unreadable is left alone.
 */
export async function removeDeadLockTemps(memoryDir: string): Promise<string[]> {
  const stateDir = path.join(memoryDir, STATE_DIR);
  const names = await lstat(stateDir).then(
    (info) => (info.isDirectory() ? readdir(stateDir) : []),
    () => [],
  );
  const removed: string[] = [];
  for (const name of names) {
    const pid = LOCK_TEMP.exec(name)?.[1];
    if (pid === undefined || isProcessAlive(Number(pid))) continue;
    await unlink(path.join(stateDir, name)).then(
      () => removed.push(name),
      () => undefined,
    );
  }
  return removed;
}

/** createExclusive, creating the lock's directory only when it is missing (a new space): no mkdir a run. */
async function createExclusiveInDir(target: string, content: string, time: Date): Promise<boolean> {
  try {
    return await createExclusive(target, content, time);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
  await mkdir(path.dirname(target), { recursive: true }).catch((error: unknown) => {
    throw describeIoError(error, path.dirname(target), 'create the state directory');
  });
  return createExclusive(target, content, time);
}

async function withTakeoverMutex<T>(
  lockFile: string,
  now: Date,
  action: () => Promise<T>,
): Promise<T | 'contended'> {
  const mutex = `${lockFile}.takeover`;
  if (!(await createExclusive(mutex, `${process.pid}\n`))) {
    const age = await stat(mutex).then(
      (info) => now.getTime() - info.mtimeMs,
      () => 0,
    );
    if (age > TAKEOVER_STALE_MS) await unlink(mutex).catch(() => undefined);
    return 'contended';
  }
  try {
    return await action();
  } finally {
    await unlink(mutex).catch(() => undefined);
  }
}

type Holder = { owner: string; pid: number; host: string; startedAt: string };

function holderOf(lock: LockInfo): Holder {
  return { owner: lock.owner, pid: lock.pid, host: lock.host, startedAt: lock.startedAt };
}

/**
 * The HeldLock of a lock we just created: its heartbeat runs from now on. Renewal checks the token through
 * the handle it then sets the mtime of, so a lock another process created in the meantime is never touched.
 */
function holdLock(
  lockFile: string,
  info: LockInfo,
  options: AcquireLockOptions,
  spaceName: string,
): HeldLock {
  const now = options.now ?? (() => new Date());
  let state: 'held' | 'lost' | 'released' = 'held';
  let renewing: Promise<boolean> | undefined;

  const renewOnce = async (): Promise<boolean> => {
    if (state !== 'held') return false;
    let handle;
    try {
      handle = await open(lockFile, 'r');
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      state = 'lost';
      return false;
    }
    try {
      const current = parseLockText(await handle.readFile('utf8'));
      if (current === 'unreadable' || current.token !== info.token) {
        state = 'lost';
        return false;
      }
      const time = now();
      await handle.utimes(time, time);
      return true;
    } finally {
      await handle.close();
    }
  };
  // One renewal at a time: a slow disk must not pile up beats.
  const renew = (): Promise<boolean> => (renewing ??= renewOnce().finally(() => (renewing = undefined)));

  const stop = (options.timer ?? intervalTimer)(
    async () => {
      // A failed beat (a disk error) is not a lost lock: the next beat, or the fence before the commit, decides.
      if (!(await renew().catch(() => true))) stop();
    },
    options.heartbeatMs ?? defaultHeartbeatMs(options.staleMs),
  );

  return {
    info,
    isLost: () => state === 'lost',
    renew,
    assertHeld: async () => {
      if (await renew()) return;
      const current = await readLockFile(lockFile).catch(() => 'unreadable' as const);
      const holder = typeof current === 'object' ? current : undefined;
      throw new LockLostError(
        `${spaceName}: this run lost its lock` +
          (holder
            ? ` to ${holder.owner} (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt})`
            : '') +
          ` because its heartbeat stopped for more than ${options.staleMs} ms (a paused or stalled process); ` +
          'its plan was discarded and nothing was written, the sessions stay pending for the next run',
        spaceName,
        holder ? holderOf(holder) : undefined,
      );
    },
    release: async () => {
      stop();
      await renewing?.catch(() => undefined);
      if (state === 'released') return;
      state = 'released';
      const current = await readLockFile(lockFile).catch(() => 'unreadable' as const);
      if (typeof current === 'object' && current.token === info.token)
        await unlink(lockFile).catch(() => undefined);
    },
  };
}

/**
 * Take the space's lock. Throws LockBusyError (with the holder) when a live run holds it; a stale lock is
 * taken over. Throws StateHijackError when `.dreamd` or a file in it is a link or not what dreamd made. The heartbeat runs until `release()`, which the caller must call in a `finally`.
 */
export async function acquireLock(memoryDir: string, options: AcquireLockOptions): Promise<HeldLock> {
  // A `.dreamd` (or lock) that is a link or not what dreamd made is refused before anything is created.
  await assertStateIsOwn(memoryDir);
  await removeDeadLockTemps(memoryDir).catch(() => undefined);
  const now = options.now ?? (() => new Date());
  const lockFile = path.join(memoryDir, LOCK_FILE);
  const spaceName = options.space ?? memoryDir;
  const info: LockInfo = {
    owner: options.owner,
    pid: process.pid,
    host: hostname(),
    startedAt: now().toISOString(),
    token: randomBytes(12).toString('hex'),
  };
  const content = `${JSON.stringify(info)}\n`;
  const held = (): HeldLock => holdLock(lockFile, info, options, spaceName);
  const busy = (holder: LockState | undefined): LockBusyError =>
    new LockBusyError(
      holder
        ? `${spaceName} is locked by ${holder.owner} (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}, last heartbeat ${holder.heartbeatAt}); try again when it finishes`
        : `${spaceName} is being locked by another process; try again shortly`,
      spaceName,
      holder ? holderOf(holder) : undefined,
    );

  if (await createExclusiveInDir(lockFile, content, now())) return held();
  const current = await readLockFile(lockFile);
  if (current === 'missing') {
    // Released between our attempt and the read: one more exclusive try, no loop.
    if (await createExclusive(lockFile, content, now())) return held();
    throw busy(undefined);
  }
  // An unreadable lock cannot have been written by acquireLock (its content is complete before it exists).
  const reason =
    current === 'unreadable' ? 'unreadable lock file' : staleReason(current, now(), options.staleMs);
  if (reason === undefined) throw busy(current === 'unreadable' ? undefined : current);
  const outcome = await withTakeoverMutex(lockFile, now(), async () => {
    const again = await readLockFile(lockFile);
    const same =
      again === 'unreadable'
        ? current === 'unreadable'
        : typeof again === 'object' && typeof current === 'object' && again.token === current.token;
    // Still the same lock and still stale: its holder did not come back to life (renew) meanwhile.
    const stillStale = typeof again !== 'object' || staleReason(again, now(), options.staleMs) !== undefined;
    if (again !== 'missing' && (!same || !stillStale)) return false;
    if (again !== 'missing') await unlink(lockFile).catch(() => undefined);
    return createExclusive(lockFile, content, now());
  });
  if (outcome === true) return held();
  const holder = await readLockFile(lockFile);
  throw busy(typeof holder === 'object' ? holder : undefined);
}
