/**
 * What Claude Code's `.consolidate-lock` cannot carry by itself: who holds it now (for `status`, `doctor` and
 * the API), and the mtime it had before dreamd took it, so a run killed while holding it can be undone.
 *
 * The lock's mtime is Claude Code's "last consolidation" time. dreamd puts the previous mtime back when a hold
 * ends without a consolidation, but a process killed while it holds the lock (`kill -9`, power loss) leaves
 * its dead PID and a fresh mtime, and Claude Code's 24-hour gate would then count a consolidation that never
 * committed. So before dreamd writes its PID into the lock it writes a hold record,
 * `.dreamd/claude-code-lock.json` (its PID and the previous mtime), and removes it when the hold ends.
 *
 * States of the hold record:
 *   absent     dreamd holds no `.consolidate-lock` of this folder (the common case)
 *   written    dreamd is taking or holds the lock; removed by `release`
 *   left over  its process died holding the lock: the next taker of dreamd's space lock (a run, a command,
 *              the recovery at start or before a command reads) puts the previous mtime back, or removes the
 *              lock file dreamd created, if the lock still holds that PID; then the record goes
 */
import { mkdir, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import type { Space } from '../config/schema.js';
import { STATE_DIR } from './paths.js';

/** The lock's file name inside the memory directory, as Claude Code names it. */
export const CLAUDE_CODE_LOCK_FILE = '.consolidate-lock';

/** Claude Code's stale-holder limit: a lock whose mtime is older than one hour is free (`HOLDER_STALE_MS`). */
export const CLAUDE_CODE_LOCK_STALE_MS = 60 * 60_000;

/** The hold record, relative to the memory directory. */
export const CLAUDE_CODE_HOLD_FILE = `${STATE_DIR}/claude-code-lock.json`;

const HoldRecord = z.object({
  version: z.literal(1),
  /** PID dreamd wrote into the lock. */
  pid: z.int().positive(),
  /** The lock's mtime before (ms since the epoch), or null when dreamd created the file. */
  priorMtimeMs: z.number().nullable(),
  /** When the hold began, ISO 8601. */
  takenAt: z.string(),
});
export type HoldRecord = z.infer<typeof HoldRecord>;

export function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Whether a PID is a running process (`kill(pid, 0)`; EPERM means it runs under another user). */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !isErrno(error, 'ESRCH');
  }
}

/** The PID in a body, as Claude Code reads it (`parseInt` of the trimmed text); only a positive integer counts. */
export function holderPidOf(body: string): number | undefined {
  const pid = Number.parseInt(body.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export async function readLockFile(file: string): Promise<{ body: string; mtimeMs: number } | undefined> {
  try {
    const [stats, body] = await Promise.all([stat(file), readFile(file, 'utf8')]);
    return { body, mtimeMs: stats.mtimeMs };
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * True when dreamd must respect `.consolidate-lock` in this space: a `claude-code` space or one with a Claude
 * Code source, a discovered space (Claude Code consolidates its own memory folder), or any folder where the
 * file exists (some Claude Code uses it).
 */
export async function sharesClaudeCodeLock(
  space: Pick<Space, 'memoryDir'> & Partial<Pick<Space, 'format' | 'sources' | 'repository'>>,
): Promise<boolean> {
  if (space.format === 'claude-code') return true;
  // A discovered space writes Claude Code's own memory folder of its repository; so does a space with a Claude Code source.
  if (space.repository !== undefined) return true;
  if (space.sources?.some((source) => source.format === 'claude-code') === true) return true;
  return (await readLockFile(path.join(space.memoryDir, CLAUDE_CODE_LOCK_FILE))) !== undefined;
}

/** Who holds `.consolidate-lock`: a live PID and an mtime within the hour. */
export interface ClaudeCodeLockHolder {
  readonly pid: number;
  /** The lock's mtime (when the holder took it or last touched it), ISO 8601. */
  readonly since: string;
  /** Milliseconds since then. */
  readonly ageMs: number;
}

/** The holder of `.consolidate-lock` in `memoryDir`, or undefined when it is absent or free. Reads only. */
export async function claudeCodeLockHolder(
  memoryDir: string,
  options: { readonly now?: () => Date; readonly isRunning?: (pid: number) => boolean } = {},
): Promise<ClaudeCodeLockHolder | undefined> {
  const lock = await readLockFile(path.join(memoryDir, CLAUDE_CODE_LOCK_FILE)).catch(() => undefined);
  if (lock === undefined) return undefined;
  const ageMs = Math.max(0, (options.now ?? (() => new Date()))().getTime() - lock.mtimeMs);
  const pid = holderPidOf(lock.body);
  if (pid === undefined || ageMs >= CLAUDE_CODE_LOCK_STALE_MS) return undefined;
  if (!(options.isRunning ?? isProcessRunning)(pid)) return undefined;
  return { pid, since: new Date(lock.mtimeMs).toISOString(), ageMs };
}

/** "pid 4242, taken 3 min ago": how messages name a holder. */
export function describeHolder(holder: ClaudeCodeLockHolder): string {
  return `pid ${holder.pid}, held for ${Math.round(holder.ageMs / 60_000)} min (since ${holder.since})`;
}

function holdFile(memoryDir: string): string {
  return path.join(memoryDir, ...CLAUDE_CODE_HOLD_FILE.split('/'));
}

export async function writeHoldRecord(memoryDir: string, record: Omit<HoldRecord, 'version'>): Promise<void> {
  await mkdir(path.join(memoryDir, STATE_DIR), { recursive: true });
  await writeFileAtomic(holdFile(memoryDir), `${JSON.stringify({ version: 1, ...record }, null, 2)}\n`);
}

export async function removeHoldRecord(memoryDir: string): Promise<void> {
  await unlink(holdFile(memoryDir)).catch((error: unknown) => {
    if (!isErrno(error, 'ENOENT')) throw error;
  });
}

/** The hold record, or undefined when there is none (a record that does not parse counts as none, and goes). */
export async function readHoldRecord(memoryDir: string): Promise<HoldRecord | undefined> {
  let text: string;
  try {
    text = await readFile(holdFile(memoryDir), 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = HoldRecord.safeParse(value);
  if (parsed.success) return parsed.data;
  await removeHoldRecord(memoryDir);
  return undefined;
}

/** True when a hold record exists (one `stat`: what recovery checks before it takes any lock). */
export async function hasHoldRecord(memoryDir: string): Promise<boolean> {
  return stat(holdFile(memoryDir)).then(
    () => true,
    () => false,
  );
}

/**
 * Undoes a hold dreamd left behind (see the states above). Call it holding dreamd's space lock: then no run
 * of dreamd on this folder is live, so a record naming this process, or a dead one, is left over. A record of
 * another live process is left alone. Returns the mtime put back (null: the file dreamd created was removed),
 * or undefined when there was nothing to undo.
 */
export async function undoLeftoverHold(
  memoryDir: string,
  options: { readonly pid?: number; readonly isRunning?: (pid: number) => boolean } = {},
): Promise<{ readonly restoredMtimeMs: number | null } | undefined> {
  const record = await readHoldRecord(memoryDir);
  if (record === undefined) return undefined;
  const isRunning = options.isRunning ?? isProcessRunning;
  if (record.pid !== (options.pid ?? process.pid) && isRunning(record.pid)) return undefined;
  const file = path.join(memoryDir, CLAUDE_CODE_LOCK_FILE);
  const lock = await readLockFile(file);
  // Someone else (Claude Code) took the lock since: the mtime is theirs now.
  const stillOurs = lock !== undefined && holderPidOf(lock.body) === record.pid;
  if (stillOurs) {
    if (record.priorMtimeMs === null) {
      await unlink(file).catch(() => undefined);
    } else {
      await writeFile(file, '');
      await utimes(file, record.priorMtimeMs / 1000, record.priorMtimeMs / 1000);
    }
  }
  await removeHoldRecord(memoryDir);
  return stillOurs ? { restoredMtimeMs: record.priorMtimeMs } : undefined;
}
