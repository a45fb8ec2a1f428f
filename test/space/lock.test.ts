import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { LockBusyError, LockLostError } from '../../src/errors.js';
import { acquireLock, readLock, type HeartbeatTimer, type LockInfo } from '../../src/space/lock.js';
import { LOCK_FILE } from '../../src/space/paths.js';
import { recoverSpace } from '../../src/space/recover-space.js';
import { eventually } from '../support/eventually.js';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lock-worker.ts');
const FULL_DISK_WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lock-full-disk-worker.ts');

function fakeClock(start: string): { now: () => Date; advance: (ms: number) => void } {
  let time = Date.parse(start);
  return { now: () => new Date(time), advance: (ms) => (time += ms) };
}

/** A heartbeat timer the test fires by hand: a paused holder is one whose timer is not fired. */
function manualTimer(): { install: HeartbeatTimer; fire: () => Promise<void>; stopped: boolean } {
  const timer = {
    beat: undefined as (() => Promise<void>) | undefined,
    stopped: false,
    install: ((beat) => {
      timer.beat = beat;
      return () => {
        timer.stopped = true;
      };
    }) as HeartbeatTimer,
    fire: async () => {
      if (!timer.stopped) await timer.beat?.();
    },
  };
  return timer;
}
const folder = useTempDir('memory');

/** A pid that existed and is now gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

async function plantLock(info: Partial<LockInfo>): Promise<void> {
  await mkdir(path.join(folder.path, '.dreamd'), { recursive: true });
  const lock: LockInfo = {
    owner: 'old run',
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    token: 'old',
    ...info,
  };
  await writeFile(path.join(folder.path, LOCK_FILE), JSON.stringify(lock));
}

/**
 * The lock taken by `owner` (staleMs one minute) on a fake clock at 2026-11-30 10:00 whose heartbeat timer only
 * fires when the test says: the clock, the timer and the lock held.
 */
async function holdOnManualClock(owner: string) {
  const clock = fakeClock('2026-11-30T10:00:00Z');
  const timer = manualTimer();
  const held = await acquireLock(folder.path, {
    owner,
    staleMs: 60_000,
    now: clock.now,
    timer: timer.install,
  });
  return { clock, timer, held };
}

/** A lock held on another host since `startedAt`, its last heartbeat (the file's mtime) at `heartbeat`. */
async function plantRemoteLock(startedAt: string, heartbeat: string): Promise<void> {
  await plantLock({ host: 'another-host', pid: 1, startedAt });
  const beat = new Date(heartbeat);
  await utimes(path.join(folder.path, LOCK_FILE), beat, beat);
}

/** Takes the lock for `owner` with the clock at `now`. */
function acquireAt(now: string, owner: string, staleMs: number) {
  return acquireLock(folder.path, { owner, staleMs, now: () => new Date(now) });
}

async function race(takers: number, staleMs = 60_000): Promise<string[]> {
  const startFile = path.join(folder.path, 'go');
  const endFile = path.join(folder.path, 'end');
  const children = Array.from({ length: takers }, () =>
    spawn(process.execPath, ['--import', 'tsx', WORKER, folder.path, startFile, endFile, String(staleMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const ready: Promise<void>[] = [];
  const outcomes = children.map((child) => {
    let out = '';
    let markReady: () => void = () => undefined;
    ready.push(new Promise<void>((resolve) => (markReady = resolve)));
    return new Promise<string>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.startsWith('ready\n')) markReady();
        const outcome = out.split('\n')[1];
        if (outcome) resolve(outcome);
      });
    });
  });
  const closed = children.map((child) => new Promise((resolve) => child.on('close', resolve)));
  await Promise.all(ready);
  await writeFile(startFile, '');
  const results = await Promise.all(outcomes);
  await writeFile(endFile, '');
  await Promise.all(closed);
  return results;
}

describe('space lock', () => {
  it('is busy while a live process holds it, and free after release', async () => {
    const held = await acquireLock(folder.path, { owner: 'run 1', staleMs: 60_000 });
    expect(await readLock(folder.path)).toMatchObject({ owner: 'run 1', pid: process.pid, host: hostname() });
    const error = await acquireLock(folder.path, { owner: 'run 2', staleMs: 60_000, space: 'shop' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockBusyError);
    expect(error).toMatchObject({ space: 'shop', holder: { owner: 'run 1', pid: process.pid } });
    await held.release();
    expect(await readLock(folder.path)).toBeUndefined();
    const again = await acquireLock(folder.path, { owner: 'run 2', staleMs: 60_000 });
    await again.release();
  });

  it('takes over a lock whose process on this host is dead', async () => {
    await plantLock({ pid: deadPid() });
    const held = await acquireLock(folder.path, { owner: 'new run', staleMs: 60_000 });
    expect((await readLock(folder.path))?.owner).toBe('new run');
    await held.release();
  });

  it('takes over a lock whose heartbeat stopped more than staleMs ago, and not one with a recent heartbeat', async () => {
    await plantRemoteLock('2026-11-30T10:00:00.000Z', '2026-11-30T10:00:00Z');
    await expect(acquireAt('2026-11-30T10:30:00Z', 'x', 3_600_000)).rejects.toThrow(LockBusyError);
    const held = await acquireAt('2026-11-30T11:00:01Z', 'late run', 3_600_000);
    expect((await readLock(folder.path))?.owner).toBe('late run');
    await held.release();
  });

  it('never calls a lock stale for its age alone: a long-held lock with a fresh heartbeat is busy', async () => {
    // Started a day ago on another host, heartbeat a second ago.
    await plantRemoteLock('2026-11-29T10:00:00.000Z', '2026-11-30T09:59:59Z');
    await expect(acquireAt('2026-11-30T10:00:00Z', 'x', 60_000)).rejects.toThrow(LockBusyError);
  });

  it('keeps the lock of a slow holder whose heartbeat runs, however long past staleMs it works', async () => {
    const { clock, timer, held } = await holdOnManualClock('slow run');
    // Ten stale times go by, with a heartbeat each half stale time.
    for (let step = 0; step < 20; step += 1) {
      clock.advance(30_000);
      await timer.fire();
      await expect(
        acquireLock(folder.path, { owner: 'taker', staleMs: 60_000, now: clock.now }),
      ).rejects.toThrow(LockBusyError);
    }
    expect(held.isLost()).toBe(false);
    await held.assertHeld();
    expect((await readLock(folder.path))?.heartbeatAt).toBe(clock.now().toISOString());
    await held.release();
    expect(await readLock(folder.path)).toBeUndefined();
    expect(timer.stopped).toBe(true);
  });

  it('fences a paused holder: once its heartbeat stopped and another took the lock, it cannot commit', async () => {
    const { clock, timer, held: paused } = await holdOnManualClock('paused run');
    clock.advance(60_001); // no heartbeat fired: the holder was paused
    const taker = await acquireLock(folder.path, { owner: 'taker', staleMs: 60_000, now: clock.now });
    const error = await paused.assertHeld().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ holder: { owner: 'taker' } });
    expect((error as Error).message).toMatch(/lost its lock to taker .*nothing was written/);
    expect(paused.isLost()).toBe(true);
    // The paused holder's heartbeat, when it comes back, never touches the new holder's lock.
    const before = await readLock(folder.path);
    clock.advance(10_000);
    await timer.fire();
    expect(await readLock(folder.path)).toEqual(before);
    expect(timer.stopped).toBe(true);
    await paused.release();
    expect((await readLock(folder.path))?.owner).toBe('taker');
    await taker.release();
  });

  it('renews its heartbeat on its own timer while the holder awaits', async () => {
    let time = new Date('2026-11-30T10:00:00Z');
    const held = await acquireLock(folder.path, {
      owner: 'run',
      staleMs: 60_000,
      heartbeatMs: 5,
      now: () => time,
    });
    time = new Date('2026-11-30T12:00:00Z');
    // Waits for the event (the mtime the timer sets), not for a duration.
    await eventually(
      async () => (await readLock(folder.path))?.heartbeatAt === time.toISOString(),
      10_000,
      'the heartbeat at the new time',
      5,
    );
    await held.release();
  });

  it('leaves no temp file behind when the disk refuses the lock file', async () => {
    const child = spawnSync(
      'sh',
      ['-c', `ulimit -f 0; exec "${process.execPath}" --import tsx "${FULL_DISK_WORKER}" "${folder.path}"`],
      {
        encoding: 'utf8',
      },
    );
    expect(child.stdout.trim()).toBe('EFBIG');
    expect(await readdir(path.join(folder.path, '.dreamd'))).toEqual([]);
  });

  it('removes the temp files a killed taker left, at the next acquisition and at recovery, and not a live one', async () => {
    const state = path.join(folder.path, '.dreamd');
    const plant = async (names: readonly string[]): Promise<void> => {
      await mkdir(state, { recursive: true });
      for (const name of names) await writeFile(path.join(state, name), '{"owner":"killed"}\n');
    };
    const dead = deadPid();
    const live = `lock.${process.pid}.0123456789ab.tmp`;
    const others = ['lock.notes.tmp', `lock.${dead}.short.tmp`];
    await plant([`lock.${dead}.a1b2c3d4e5f6.tmp`, `lock.takeover.${dead}.a1b2c3d4e5f6.tmp`, live, ...others]);
    const held = await acquireLock(folder.path, { owner: 'next run', staleMs: 60_000 });
    expect((await readdir(state)).sort()).toEqual(['lock', live, ...others].sort());
    await held.release();

    await plant([`lock.${dead}.ffffffffffff.tmp`]);
    expect(await recoverSpace(folder.path)).toEqual({ status: 'clean' });
    expect((await readdir(state)).sort()).toEqual([live, ...others].sort());
  });

  it('release leaves a lock that someone else took over', async () => {
    const held = await acquireLock(folder.path, { owner: 'slow run', staleMs: 60_000 });
    await plantLock({ owner: 'taker', token: 'other' });
    await held.release();
    expect((await readLock(folder.path))?.owner).toBe('taker');
    expect(JSON.parse(await readFile(path.join(folder.path, LOCK_FILE), 'utf8'))).toMatchObject({
      token: 'other',
    });
  });

  it('lets exactly one of several processes win a free lock', async () => {
    const outcomes = await race(5);
    expect(outcomes.filter((outcome) => outcome === 'won')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'LockBusyError')).toHaveLength(4);
  });

  it('lets exactly one of several processes take over a stale lock', async () => {
    await plantLock({ pid: deadPid() });
    const outcomes = await race(5);
    expect(outcomes.filter((outcome) => outcome === 'won')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'LockBusyError')).toHaveLength(4);
  });
});
