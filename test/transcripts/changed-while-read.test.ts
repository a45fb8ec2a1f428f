import { appendFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readSession } from '../../src/transcripts/read-session.js';
import { MAX_BYTES, createTempDir, nativeDocument } from './helpers.js';

/**
 * The agent writes to the file just after dreamd's first look at it (`lstat` of a file directly in the
 * sessions directory, `stat` after a `realpath`): the real file really changes while it is being read. The
 * hook only decides the instant; the write and the detection are real.
 */
const appendOnFirstStat = vi.hoisted(() => ({ paths: new Map<string, string>() }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const appendAfter = <S>(path: string, stats: S): S => {
    const addition = appendOnFirstStat.paths.get(path);
    if (addition !== undefined) {
      appendOnFirstStat.paths.delete(path);
      appendFileSync(path, addition);
    }
    return stats;
  };
  return {
    ...actual,
    stat: async (...args: Parameters<typeof actual.stat>) =>
      appendAfter(String(args[0]), await actual.stat(...args)),
    lstat: async (...args: Parameters<typeof actual.lstat>) =>
      appendAfter(String(args[0]), await actual.lstat(...args)),
  };
});

describe('a file that changes while it is read', () => {
  let directory: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    const created = await createTempDir('changing');
    // The reader stats the real path; on systems where the temp dir is a symlink the two would differ.
    directory = { path: await realpath(created.path), remove: created.remove };
  });
  afterEach(async () => {
    appendOnFirstStat.paths.clear();
    await directory.remove();
  });

  it('is reported as changed-while-read for a native transcript', async () => {
    const file = join(directory.path, 'changing.json');
    await writeFile(file, nativeDocument());
    appendOnFirstStat.paths.set(file, '\n');
    const failure = await readSession('changing.json', {
      format: 'native',
      sessionsDir: directory.path,
      maxBytes: MAX_BYTES,
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'changed-while-read', file });
    // Once it is still again, it reads.
    const session = await readSession('changing.json', {
      format: 'native',
      sessionsDir: directory.path,
      maxBytes: MAX_BYTES,
    });
    expect(session.messageCount).toBe(2);
  });

  it('is reported as changed-while-read for a native transcript read as a stream', async () => {
    const file = join(directory.path, 'changing-streamed.json');
    await writeFile(file, nativeDocument());
    appendOnFirstStat.paths.set(file, '\n');
    const options = {
      format: 'native' as const,
      sessionsDir: directory.path,
      maxBytes: MAX_BYTES,
      streamNativeAboveBytes: 0,
    };
    const failure = await readSession('changing-streamed.json', options).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'changed-while-read', file });
    const session = await readSession('changing-streamed.json', options);
    expect(session.messageCount).toBe(2);
  });

  it('is reported as changed-while-read for a Claude Code transcript', async () => {
    const file = join(directory.path, 'changing.jsonl');
    const line = JSON.stringify({ type: 'user', message: { role: 'user', content: 'hello' } });
    await writeFile(file, `${line}\n`);
    appendOnFirstStat.paths.set(file, `${line}\n`);
    const failure = await readSession('changing.jsonl', {
      format: 'claude-code',
      sessionsDir: directory.path,
      maxBytes: MAX_BYTES,
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'changed-while-read', file });
    expect((failure as Error).message).toContain('read again on the next tick');
  });
});
