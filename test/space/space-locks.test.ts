import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockBusyError, MemoryFormatError } from '../../src/errors.js';
import { CLAUDE_CODE_LOCK_FILE } from '../../src/space/claude-code-lock.js';
import { LOCK_FILE, acquireLock, readLock } from '../../src/space/index.js';
import { releaseInReverse, withSpaceLocks, type LockedSpace } from '../../src/space/space-locks.js';
import { useTempDir } from '../support/fixtures.js';

const STALE_MS = 10 * 60_000;
/** A live process that is not this one: the test runner that started this worker. */
const LIVE_OTHER_PID = process.ppid;
/** Above any pid_max: a free `.consolidate-lock` left by a dead holder, which taking and releasing empties. */
const DEAD_PID = 2_147_483_000;

describe('withSpaceLocks', () => {
  const directory = useTempDir('space-locks');
  /** A space Claude Code shares (its transcripts are Claude Code's), so both locks are taken. */
  const space = (): LockedSpace => ({ id: 'my-repo', memoryDir: directory.path, format: 'claude-code' });
  const options = { owner: 'dreamd test', staleMs: STALE_MS };
  const claudeCodeLockBody = async (): Promise<string | undefined> => {
    const file = join(directory.path, CLAUDE_CODE_LOCK_FILE);
    return existsSync(file) ? readFile(file, 'utf8') : undefined;
  };

  it("holds dreamd's lock and Claude Code's while the action runs, and neither after", async () => {
    const seen = await withSpaceLocks(space(), options, async (locks) => ({
      owner: (await readLock(directory.path))?.owner,
      claudeCodeBody: await claudeCodeLockBody(),
      tookClaudeCode: locks.claudeCodeLock !== undefined,
    }));
    expect(seen).toEqual({ owner: 'dreamd test', claudeCodeBody: String(process.pid), tookClaudeCode: true });
    expect(await readLock(directory.path)).toBeUndefined();
    // Absent before, so removed again: nothing was consolidated.
    expect(await claudeCodeLockBody()).toBeUndefined();
  });

  it("takes dreamd's lock first: when it is busy, Claude Code's lock is never touched", async () => {
    await writeFile(join(directory.path, CLAUDE_CODE_LOCK_FILE), String(DEAD_PID));
    const other = await acquireLock(directory.path, {
      owner: 'another run',
      staleMs: STALE_MS,
      space: 'my-repo',
    });
    try {
      let ran = false;
      await expect(
        withSpaceLocks(space(), options, async () => {
          ran = true;
        }),
      ).rejects.toBeInstanceOf(LockBusyError);
      expect(ran).toBe(false);
      expect(await claudeCodeLockBody()).toBe(String(DEAD_PID));
      expect((await readLock(directory.path))?.owner).toBe('another run');
    } finally {
      await other.release();
    }
  });

  it("releases dreamd's lock when Claude Code's is busy", async () => {
    await writeFile(join(directory.path, CLAUDE_CODE_LOCK_FILE), String(LIVE_OTHER_PID));
    await expect(withSpaceLocks(space(), options, () => Promise.resolve())).rejects.toBeInstanceOf(
      LockBusyError,
    );
    expect(await readLock(directory.path)).toBeUndefined();
    expect(await claudeCodeLockBody()).toBe(String(LIVE_OTHER_PID));
  });

  it('releases both locks when the recovery of an interrupted transaction fails, and runs nothing', async () => {
    // Committed but without its manifest: outside damage, which recovery refuses to guess about.
    await writeFile(join(directory.path, CLAUDE_CODE_LOCK_FILE), String(DEAD_PID));
    await mkdir(join(directory.path, '.dreamd/staging/run-1'), { recursive: true });
    await writeFile(join(directory.path, '.dreamd/staging/run-1/COMMITTED'), '');
    let ran = false;
    const failure = withSpaceLocks(space(), options, async () => {
      ran = true;
    });
    await expect(failure).rejects.toBeInstanceOf(MemoryFormatError);
    expect(ran).toBe(false);
    expect(await readLock(directory.path)).toBeUndefined();
    expect(await claudeCodeLockBody()).toBe('');
  });

  it('releases both locks when the action throws, and throws its error', async () => {
    await writeFile(join(directory.path, CLAUDE_CODE_LOCK_FILE), String(DEAD_PID));
    const failure = withSpaceLocks(space(), options, () => Promise.reject(new Error('the action failed')));
    await expect(failure).rejects.toThrow('the action failed');
    expect(existsSync(join(directory.path, LOCK_FILE))).toBe(false);
    expect(await claudeCodeLockBody()).toBe('');
  });

  it("leaves Claude Code's lock alone when told to, and skips recovery when told to", async () => {
    await mkdir(join(directory.path, '.dreamd/staging/run-1'), { recursive: true });
    const taken = await withSpaceLocks(
      space(),
      { ...options, claudeCode: false, recover: false },
      async (locks) => ({
        claudeCodeLock: locks.claudeCodeLock,
        staging: existsSync(join(directory.path, '.dreamd/staging/run-1')),
      }),
    );
    expect(taken).toEqual({ claudeCodeLock: undefined, staging: true });
    expect(await claudeCodeLockBody()).toBeUndefined();
  });
});

describe('releaseInReverse', () => {
  it('runs the releases last first, and every one even when one throws, then throws the first error', async () => {
    const calls: string[] = [];
    const release = (name: string, error?: Error) => async () => {
      calls.push(name);
      if (error !== undefined) throw error;
    };
    const releases = [release('first'), release('second', new Error('second failed')), release('third')];
    await expect(releaseInReverse(releases)).rejects.toThrow('second failed');
    expect(calls).toEqual(['third', 'second', 'first']);
    await releaseInReverse(releases);
    expect(calls).toEqual(['third', 'second', 'first']);
  });
});
