import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWorkingDirectory, workingDirectoryOfLine } from '../../src/transcripts/index.js';
import { HEAD_LIMIT_BYTES } from '../../src/transcripts/working-directory.js';
import { CLAUDE_CODE_FIXTURES, CODEX_FIXTURE, CODEX_FIXTURES, FIXTURE } from './helpers.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

const temp = (): string => tempDirRemovedAfterTest('cwd');

describe("a transcript's working directory", () => {
  it('is read from the real fixtures of both formats', async () => {
    expect(await readWorkingDirectory(join(CLAUDE_CODE_FIXTURES, FIXTURE.helloWorld), 'claude-code')).toEqual(
      {
        cwd: '/tmp/tmp74wiyiny',
      },
    );
    expect(await readWorkingDirectory(join(CODEX_FIXTURES, CODEX_FIXTURE.head), 'codex')).toEqual({
      cwd: '/Users/pinouchon/code/rtchess',
    });
  });

  it('is absent from a Codex slice without session_meta, and named as such', async () => {
    const found = await readWorkingDirectory(join(CODEX_FIXTURES, CODEX_FIXTURE.tail), 'codex');
    expect(found).toMatchObject({
      reason: 'no-working-directory',
      detail: expect.stringContaining('session_meta'),
    });
  });

  it('takes only an absolute path, and only the field its format puts it in', () => {
    expect(workingDirectoryOfLine('{"type":"user","cwd":"relative/dir"}', 'claude-code')).toBeUndefined();
    expect(workingDirectoryOfLine('{"type":"user","cwd":"/a/b"}', 'claude-code')).toBe('/a/b');
    expect(workingDirectoryOfLine('{"type":"user","cwd":"/a/b"}', 'codex')).toBeUndefined();
    expect(workingDirectoryOfLine('{"type":"session_meta","payload":{"cwd":"/r"}}', 'codex')).toBe('/r');
    expect(workingDirectoryOfLine('not json "cwd"', 'claude-code')).toBeUndefined();
  });

  it('reads past a first line longer than one chunk, and a character split between chunks', async () => {
    const folder = temp();
    const path = join(folder, 'long.jsonl');
    const summary = JSON.stringify({ type: 'summary', summary: 'é'.repeat(40_000) });
    writeFileSync(path, `${summary}\n${JSON.stringify({ type: 'user', cwd: '/home/ünï/repo' })}\n`);
    expect(await readWorkingDirectory(path, 'claude-code')).toEqual({ cwd: '/home/ünï/repo' });
  });

  it('stops at its head limit rather than reading a whole large transcript', async () => {
    const folder = temp();
    const path = join(folder, 'big.jsonl');
    const filler = `${JSON.stringify({ type: 'summary', summary: 'x'.repeat(1000) })}\n`;
    writeFileSync(
      path,
      filler.repeat(Math.ceil(HEAD_LIMIT_BYTES / filler.length) + 10) + '{"cwd":"/late"}\n',
    );
    expect(await readWorkingDirectory(path, 'claude-code')).toMatchObject({
      reason: 'no-working-directory',
      detail: expect.stringContaining('first 1 MiB'),
    });
  });

  it('says a file cannot be opened without throwing', async () => {
    expect(await readWorkingDirectory(join(temp(), 'missing.jsonl'), 'codex')).toMatchObject({
      reason: 'unreadable',
    });
  });
});
