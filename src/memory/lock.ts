/**
 * The per-space lock (`.dreamd/lock`): at most one run writes a memory directory at a time.
 *
 * States of the lock file:
 *   absent   free: `acquireLock` creates it with complete content in one step (hard link of a fully
 *            written temp file, which fails when the name exists, like open with `wx` but never half-written)
 *   held     a live holder: `acquireLock` throws LockBusyError with the holder's data
 *   stale    the holder is on this host and its pid is dead, or it started more than `staleMs` ago:
 *            taken over under a short-lived takeover mutex (`.dreamd/lock.takeover`), which re-reads the
 *            lock, removes it only if it is still the same stale one, then creates ours; two takers cannot
 *            both win because the final create is exclusive
 * `release()` removes the lock only when it still carries our token.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LockBusyError } from '../errors.js';
import { LOCK_FILE } from './paths.js';

export const LockInfo = z.object({
  owner: z.string(),
  pid: z.number().int(),
  host: z.string(),
  startedAt: z.string(),
  token: z.string(),
});
export type LockInfo = z.infer<typeof LockInfo>;

export interface AcquireLockOptions {
  /** Who holds it, for status output (e.g. "worker 3", "dreamd consolidate"). */
  readonly owner: string;
  /** A lock older than this (milliseconds) is stale whoever holds it. A run should finish well within it. */
  readonly staleMs: number;
  /** Clock; default the system clock. */
  readonly now?: () => Date;
  /** Space id for the error message; default the memory directory. */
  readonly space?: string;
}

export interface HeldLock {
  readonly info: LockInfo;
  /** Remove the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/** A takeover mutex older than this is from a crashed taker (a takeover takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** The lock's holder, for status output; undefined when the lock is free (or its file unreadable). */
export async function readLock(memoryDir: string): Promise<LockInfo | undefined> {
  const found = await readLockFile(path.join(memoryDir, LOCK_FILE));
  return found === 'missing' || found === 'unreadable' ? undefined : found;
}

async function readLockFile(file: string): Promise<LockInfo | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return 'missing';
    throw error;
  }
  try {
    const parsed = LockInfo.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
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

/** Why a lock is stale, or undefined when its holder may still be running. */
export function staleReason(info: LockInfo, now: Date, staleMs: number): string | undefined {
  if (info.host === hostname() && !isProcessAlive(info.pid))
    return `process ${info.pid} on ${info.host} is gone`;
  const started = Date.parse(info.startedAt);
  if (Number.isNaN(started) || now.getTime() - started > staleMs)
    return `started ${info.startedAt}, more than ${staleMs} ms ago`;
  return undefined;
}

/** Create `target` with `content` only if it does not exist; false when it does. */
async function createExclusive(target: string, content: string): Promise<boolean> {
  const temporary = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, content, { flag: 'wx' });
  try {
    await link(temporary, target);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** createExclusive, creating the lock's directory only when it is missing (a new space): no mkdir a run. */
async function createExclusiveInDir(target: string, content: string): Promise<boolean> {
  try {
    return await createExclusive(target, content);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
  await mkdir(path.dirname(target), { recursive: true });
  return createExclusive(target, content);
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

/**
 * Take the space's lock. Throws LockBusyError (with the holder) when a live run holds it; a stale lock is
 * taken over. The caller must `release()` it in a `finally`.
 */
export async function acquireLock(memoryDir: string, options: AcquireLockOptions): Promise<HeldLock> {
  const now = options.now ?? (() => new Date());
  const lockFile = path.join(memoryDir, LOCK_FILE);
  const info: LockInfo = {
    owner: options.owner,
    pid: process.pid,
    host: hostname(),
    startedAt: now().toISOString(),
    token: randomBytes(12).toString('hex'),
  };
  const content = `${JSON.stringify(info)}\n`;
  const held: HeldLock = {
    info,
    release: async () => {
      const current = await readLockFile(lockFile);
      if (typeof current === 'object' && current.token === info.token)
        await unlink(lockFile).catch(() => undefined);
    },
  };
  const busy = (holder: LockInfo | undefined): LockBusyError =>
    new LockBusyError(
      holder
        ? `${options.space ?? memoryDir} is locked by ${holder.owner} (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}); try again when it finishes`
        : `${options.space ?? memoryDir} is being locked by another process; try again shortly`,
      options.space ?? memoryDir,
      holder
        ? { owner: holder.owner, pid: holder.pid, host: holder.host, startedAt: holder.startedAt }
        : undefined,
    );

  if (await createExclusiveInDir(lockFile, content)) return held;
  const current = await readLockFile(lockFile);
  if (current === 'missing') {
    // Released between our attempt and the read: one more exclusive try, no loop.
    if (await createExclusive(lockFile, content)) return held;
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
    if (again !== 'missing' && !same) return false;
    if (again !== 'missing') await unlink(lockFile).catch(() => undefined);
    return createExclusive(lockFile, content);
  });
  if (outcome === true) return held;
  const holder = await readLockFile(lockFile);
  throw busy(typeof holder === 'object' ? holder : undefined);
}
