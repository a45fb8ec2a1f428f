import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockBusyError } from '../../src/errors.js';
import { acquireLock, readLock, type LockInfo } from '../../src/memory/lock.js';
import { LOCK_FILE } from '../../src/memory/paths.js';
import { makeTempDir, removeDir } from './helpers.js';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lock-worker.ts');
let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

/** A pid that existed and is now gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

async function plantLock(info: Partial<LockInfo>): Promise<void> {
  await mkdir(path.join(dir, '.dreamd'), { recursive: true });
  const lock: LockInfo = {
    owner: 'old run',
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    token: 'old',
    ...info,
  };
  await writeFile(path.join(dir, LOCK_FILE), JSON.stringify(lock));
}

async function race(takers: number, staleMs = 60_000): Promise<string[]> {
  const startFile = path.join(dir, 'go');
  const endFile = path.join(dir, 'end');
  const children = Array.from({ length: takers }, () =>
    spawn(process.execPath, ['--import', 'tsx', WORKER, dir, startFile, endFile, String(staleMs)], {
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
    const held = await acquireLock(dir, { owner: 'run 1', staleMs: 60_000 });
    expect(await readLock(dir)).toMatchObject({ owner: 'run 1', pid: process.pid, host: hostname() });
    const error = await acquireLock(dir, { owner: 'run 2', staleMs: 60_000, space: 'shop' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockBusyError);
    expect(error).toMatchObject({ space: 'shop', holder: { owner: 'run 1', pid: process.pid } });
    await held.release();
    expect(await readLock(dir)).toBeUndefined();
    const again = await acquireLock(dir, { owner: 'run 2', staleMs: 60_000 });
    await again.release();
  });

  it('takes over a lock whose process on this host is dead', async () => {
    await plantLock({ pid: deadPid() });
    const held = await acquireLock(dir, { owner: 'new run', staleMs: 60_000 });
    expect((await readLock(dir))?.owner).toBe('new run');
    await held.release();
  });

  it('takes over a lock older than staleMs, and not a younger one', async () => {
    await plantLock({ host: 'another-host', pid: 1, startedAt: '2026-11-30T10:00:00.000Z' });
    await expect(
      acquireLock(dir, { owner: 'x', staleMs: 3_600_000, now: () => new Date('2026-11-30T10:30:00Z') }),
    ).rejects.toThrow(LockBusyError);
    const held = await acquireLock(dir, {
      owner: 'late run',
      staleMs: 3_600_000,
      now: () => new Date('2026-11-30T11:00:01Z'),
    });
    expect((await readLock(dir))?.owner).toBe('late run');
    await held.release();
  });

  it('release leaves a lock that someone else took over', async () => {
    const held = await acquireLock(dir, { owner: 'slow run', staleMs: 60_000 });
    await plantLock({ owner: 'taker', token: 'other' });
    await held.release();
    expect((await readLock(dir))?.owner).toBe('taker');
    expect(JSON.parse(await readFile(path.join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ token: 'other' });
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
