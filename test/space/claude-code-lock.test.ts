import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { LockBusyError } from '../../src/errors.js';
import {
  CLAUDE_CODE_LOCK_FILE,
  ClaudeCodeLockBusyError,
  acquireClaudeCodeLock,
  acquireClaudeCodeLockFor,
} from '../../src/space/claude-code-lock.js';
import { CLAUDE_CODE_HOLD_FILE, undoLeftoverHold } from '../../src/space/claude-code-hold.js';
import { useTempDir } from '../support/fixtures.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const minutesAgo = (minutes: number): Date => new Date(NOW.getTime() - minutes * 60_000);
/** A live process that is not this one: the test runner that started this worker. */
const LIVE_OTHER_PID = process.ppid;
/** Above any pid_max: `kill(pid, 0)` says ESRCH. */
const DEAD_PID = 2_147_483_000;

describe("Claude Code's .consolidate-lock", () => {
  const directory = useTempDir('cc-lock');
  let lockFile: string;
  beforeEach(async () => {
    lockFile = join(directory.path, CLAUDE_CODE_LOCK_FILE);
  });

  async function writeLock(body: string, mtime: Date): Promise<void> {
    await writeFile(lockFile, body);
    await utimes(lockFile, mtime, mtime);
  }
  async function lockState(): Promise<{ body: string; mtimeMs: number } | undefined> {
    if (!existsSync(lockFile)) return undefined;
    return { body: await readFile(lockFile, 'utf8'), mtimeMs: (await stat(lockFile)).mtimeMs };
  }
  const take = () =>
    acquireClaudeCodeLock(directory.path, { now: () => NOW, space: 'my-repo', heartbeatMs: 0 });

  it('leaves a lock held by a live process as it is and says why, as a LockBusyError', async () => {
    await writeLock(String(LIVE_OTHER_PID), minutesAgo(20));
    const before = await lockState();
    const failure = await take().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClaudeCodeLockBusyError);
    expect(failure).toBeInstanceOf(LockBusyError);
    expect(failure).toMatchObject({ lock: 'claude-code', holderPid: LIVE_OTHER_PID, space: 'my-repo' });
    const message = (failure as Error).message;
    expect(message).toContain('my-repo: Claude Code is consolidating this memory folder');
    expect(message).toContain(`pid ${LIVE_OTHER_PID}, since ${minutesAgo(20).toISOString()}`);
    expect(message).toContain('dreamd wrote nothing');
    expect(message).toContain('"autoDreamEnabled": false');
    expect(await lockState()).toEqual(before);
  });

  it('takes a lock older than an hour even when its holder is alive, and one whose holder is dead', async () => {
    for (const [body, mtime] of [
      [String(LIVE_OTHER_PID), minutesAgo(61)],
      [String(DEAD_PID), minutesAgo(5)],
      ['', minutesAgo(5)],
      ['not a pid', minutesAgo(5)],
    ] as const) {
      await writeLock(body, mtime);
      const held = await take();
      expect(held.priorMtimeMs).toBe(mtime.getTime());
      expect((await lockState())?.body).toBe(String(process.pid));
      await held.release();
    }
  });

  it('sets the mtime to the run time after a consolidation, and empties the body', async () => {
    const lastRun = minutesAgo(48 * 60);
    await writeLock('', lastRun);
    const held = await take();
    const committedAt = minutesAgo(1);
    held.consolidated(committedAt);
    await held.release();
    expect(await lockState()).toEqual({ body: '', mtimeMs: committedAt.getTime() });
  });

  it('puts the previous mtime back after a failed run, and removes a lock that did not exist', async () => {
    const lastRun = minutesAgo(48 * 60);
    await writeLock(String(DEAD_PID), lastRun);
    const held = await take();
    expect((await stat(lockFile)).mtimeMs).not.toBe(lastRun.getTime());
    await held.release();
    expect(await lockState()).toEqual({ body: '', mtimeMs: lastRun.getTime() });

    const fresh = await acquireClaudeCodeLock(join(directory.path, 'new-folder'), { heartbeatMs: 0 });
    expect(fresh.priorMtimeMs).toBeUndefined();
    await fresh.release();
    expect(existsSync(join(directory.path, 'new-folder', CLAUDE_CODE_LOCK_FILE))).toBe(false);
  });

  it('stops a commit when another process took the lock meanwhile, and leaves that process its lock', async () => {
    const held = await take();
    await writeLock(String(LIVE_OTHER_PID), NOW);
    const failure = await held.confirm().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClaudeCodeLockBusyError);
    expect((failure as Error).message).toContain('another process took the lock while this run worked');
    await held.refresh();
    held.consolidated(NOW);
    await held.release();
    expect(await lockState()).toEqual({ body: String(LIVE_OTHER_PID), mtimeMs: NOW.getTime() });
  });

  it('touches the mtime of a lock it holds when refreshed', async () => {
    let clock = minutesAgo(30);
    const held = await acquireClaudeCodeLock(directory.path, { now: () => clock, heartbeatMs: 0 });
    await utimes(lockFile, minutesAgo(30), minutesAgo(30));
    clock = NOW;
    await held.refresh();
    expect((await stat(lockFile)).mtimeMs).toBe(NOW.getTime());
    await held.confirm();
    await held.release();
  });

  it('keeps the previous mtime in a hold record while held, so a killed holder can be undone', async () => {
    await writeLock('', minutesAgo(3 * 24 * 60));
    // A holder that "dies": its PID is reported dead from now on, and it never releases.
    let alive = true;
    await acquireClaudeCodeLock(directory.path, { now: () => NOW, pid: 4242, heartbeatMs: 0 });
    expect(JSON.parse(await readFile(join(directory.path, CLAUDE_CODE_HOLD_FILE), 'utf8'))).toMatchObject({
      pid: 4242,
      priorMtimeMs: minutesAgo(3 * 24 * 60).getTime(),
    });
    const isRunning = (pid: number) => pid === 4242 && alive;
    // While its PID lives, the record is that holder's: left alone.
    expect(await undoLeftoverHold(directory.path, { isRunning })).toBeUndefined();
    expect((await lockState())?.body).toBe('4242');
    alive = false;
    expect(await undoLeftoverHold(directory.path, { isRunning })).toEqual({
      restoredMtimeMs: minutesAgo(3 * 24 * 60).getTime(),
    });
    expect(await lockState()).toEqual({ body: '', mtimeMs: minutesAgo(3 * 24 * 60).getTime() });
    expect(existsSync(join(directory.path, CLAUDE_CODE_HOLD_FILE))).toBe(false);
  });

  it('removes a lock file a killed holder created, and leaves one Claude Code took since', async () => {
    await acquireClaudeCodeLock(directory.path, { now: () => NOW, pid: 4242, heartbeatMs: 0 });
    expect(await undoLeftoverHold(directory.path, { isRunning: () => false })).toEqual({
      restoredMtimeMs: null,
    });
    expect(existsSync(lockFile)).toBe(false);

    await acquireClaudeCodeLock(directory.path, { now: () => NOW, pid: 4242, heartbeatMs: 0 });
    await writeLock(String(LIVE_OTHER_PID), minutesAgo(1));
    expect(await undoLeftoverHold(directory.path, { isRunning: (pid) => pid !== 4242 })).toBeUndefined();
    expect(await lockState()).toEqual({ body: String(LIVE_OTHER_PID), mtimeMs: minutesAgo(1).getTime() });
    expect(existsSync(join(directory.path, CLAUDE_CODE_HOLD_FILE))).toBe(false);
  });

  it('takes a left-over hold back to its previous mtime before taking the lock again', async () => {
    await writeLock('', minutesAgo(3 * 24 * 60));
    await acquireClaudeCodeLock(directory.path, { now: () => NOW, pid: DEAD_PID, heartbeatMs: 0 });
    const held = await acquireClaudeCodeLock(directory.path, { now: () => NOW, heartbeatMs: 0 });
    expect(held.priorMtimeMs).toBe(minutesAgo(3 * 24 * 60).getTime());
    await held.release();
    expect(await lockState()).toEqual({ body: '', mtimeMs: minutesAgo(3 * 24 * 60).getTime() });
    expect(existsSync(join(directory.path, CLAUDE_CODE_HOLD_FILE))).toBe(false);
  });

  it('is taken in a claude-code space, and in any space whose folder holds the file', async () => {
    await mkdir(join(directory.path, 'memory'));
    const space = {
      id: 'shop',
      sessionsDir: join(directory.path, 'sessions'),
      memoryDir: join(directory.path, 'memory'),
      format: 'native',
    } as const;
    expect(await acquireClaudeCodeLockFor(space, { heartbeatMs: 0 })).toBeUndefined();
    expect(existsSync(join(space.memoryDir, CLAUDE_CODE_LOCK_FILE))).toBe(false);
    const held = await acquireClaudeCodeLockFor({ ...space, format: 'claude-code' }, { heartbeatMs: 0 });
    expect(await readFile(join(space.memoryDir, CLAUDE_CODE_LOCK_FILE), 'utf8')).toBe(String(process.pid));
    await held?.release();
    // Claude Code consolidates this folder too (its lock is there): a native space respects it as well.
    await writeFile(join(space.memoryDir, CLAUDE_CODE_LOCK_FILE), String(LIVE_OTHER_PID));
    await expect(acquireClaudeCodeLockFor(space, { heartbeatMs: 0 })).rejects.toBeInstanceOf(
      ClaudeCodeLockBusyError,
    );
  });
});
