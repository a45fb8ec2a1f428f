import type * as Fs from 'node:fs';
import { appendFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { nativeDocument, readTranscript } from './helpers.js';
import { createTempDir } from '../support/fixtures.js';

/**
 * The agent writes to the file just after dreamd's first look at it (`lstat` of a file directly in the
 * sessions directory, synchronous for a small one, `stat` after a `realpath`): the real file really changes
 * while it is being read. The hook only decides the instant; the write and the detection are real.
 */
const appendOnFirstStat = vi.hoisted(() => ({
  paths: new Map<string, string>(),
  appendAfter<S>(path: string, stats: S): S {
    const addition = this.paths.get(path);
    if (addition !== undefined) {
      this.paths.delete(path);
      appendFileSync(path, addition);
    }
    return stats;
  },
}));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof Fs>();
  return {
    ...actual,
    lstatSync: (...args: Parameters<typeof actual.lstatSync>) =>
      appendOnFirstStat.appendAfter(String(args[0]), actual.lstatSync(...args)),
  };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const appendAfter = <S>(path: string, stats: S): S => appendOnFirstStat.appendAfter(path, stats);
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

  const CLAUDE_CODE_LINE = JSON.stringify({ type: 'user', message: { role: 'user', content: 'hello' } });

  it.each([
    {
      kind: 'a native transcript',
      format: 'native',
      name: 'changing.json',
      text: nativeDocument(),
      addition: '\n',
    },
    {
      kind: 'a native transcript read as a stream',
      format: 'native',
      name: 'changing-streamed.json',
      text: nativeDocument(),
      addition: '\n',
      streamNativeAboveBytes: 0,
    },
    {
      kind: 'a Claude Code transcript',
      format: 'claude-code',
      name: 'changing.jsonl',
      text: `${CLAUDE_CODE_LINE}\n`,
      addition: `${CLAUDE_CODE_LINE}\n`,
    },
  ] as const)(
    'is reported as changed-while-read for $kind, and reads once it is still again',
    async ({ format, name, text, addition, ...options }) => {
      const file = join(directory.path, name);
      await writeFile(file, text);
      appendOnFirstStat.paths.set(file, addition);
      const read = () => readTranscript(format, directory.path, name, options);
      const failure = await read().catch((error: unknown) => error);
      expect(failure).toMatchObject({ reason: 'changed-while-read', file });
      expect((failure as Error).message).toContain('read again on the next tick');
      expect((await read()).messageCount).toBe(2);
    },
  );
});
