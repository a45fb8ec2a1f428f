import { readFile, symlink, truncate, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { TranscriptError } from '../../src/errors.js';
import { readSettledSessions } from '../../src/transcripts/read-settled-sessions.js';
import { scanSessions } from '../../src/transcripts/scan-sessions.js';
import {
  HOSTILE_FIXTURES,
  MAX_BYTES,
  claudeCodeSpace,
  createLedger,
  nativeDocument,
  nativeSpace,
  readTranscript,
} from './helpers.js';
import type { Space } from '../../src/config/schema.js';
import { useTempDir } from '../support/fixtures.js';

/** Every file settled: a clock far after any mtime. */
const LATER = new Date('2100-01-01T00:00:00Z');

/** Native sessions that do not parse: invalid JSON (line 3, column 16) and a role the schema does not know. */
const UNREADABLE = {
  'bad-json.json': '{\n  "startedAt": "2026-11-20",\n  "messages": [,]\n}',
  'bad-shape.json': JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] }),
};

/** Scans `space` with an empty ledger and the clock at LATER (every session settled), and reads what it finds. */
async function scanAndRead(space: Space, maxBytes = MAX_BYTES) {
  const ledger = createLedger();
  const scan = await scanSessions({ space, ledger, now: LATER, quietMinutes: 30, maxBytes });
  return readSettledSessions(scan, { ledger, maxBytes });
}

describe('bad native input is reported with path and reason, and the good files beside it are read', () => {
  const directory = useTempDir('bad');
  let sessionsDir: string;
  beforeEach(async () => {
    sessionsDir = join(directory.path, 'sessions');
    await mkdir(sessionsDir);
  });

  /** Writes each file of `files` (name to contents) into the sessions folder. */
  async function writeSessions(files: Record<string, string>): Promise<void> {
    for (const [name, text] of Object.entries(files)) await writeFile(join(sessionsDir, name), text);
  }

  /** What reading one native session throws (or its result, if it does not). */
  function readFailure(name: string, maxBytes = MAX_BYTES): Promise<unknown> {
    return readTranscript('native', sessionsDir, name, { maxBytes }).catch((error: unknown) => error);
  }

  it('sets aside each kind of broken file and reads the two good ones', async () => {
    await writeFile(join(sessionsDir, 'good-a.json'), nativeDocument({ id: 'good-a' }));
    await writeFile(join(sessionsDir, 'good-b.json'), nativeDocument({ id: 'good-b' }));
    await writeFile(join(sessionsDir, 'empty.json'), '');
    await writeFile(join(sessionsDir, 'blank.json'), ' \n\t\n');
    await writeFile(join(sessionsDir, 'binary.json'), Buffer.from([0x7b, 0x22, 0x00, 0x01, 0x7d]));
    await writeFile(
      join(sessionsDir, 'latin1.json'),
      Buffer.from('{"messages":[{"role":"user","content":"caf\xe9"}]}', 'latin1'),
    );
    await writeSessions(UNREADABLE);
    await writeFile(join(sessionsDir, 'dup-1.json'), nativeDocument({ id: 'same' }));
    await writeFile(join(sessionsDir, 'dup-2.json'), nativeDocument({ id: 'same' }));
    await writeFile(join(directory.path, 'secret.json'), nativeDocument({ id: 'outside' }));
    await symlink(join(directory.path, 'secret.json'), join(sessionsDir, 'link-out.json'));
    await symlink(join(sessionsDir, 'good-a.json'), join(sessionsDir, 'link-in.json'));
    await writeFile(join(sessionsDir, 'huge.json'), '');
    await truncate(join(sessionsDir, 'huge.json'), 100 * 1024 * 1024);

    const result = await scanAndRead(nativeSpace(sessionsDir));
    const reasons = Object.fromEntries(result.problems.map((problem) => [problem.file, problem.reason]));
    expect(reasons).toEqual({
      'empty.json': 'empty',
      'blank.json': 'empty',
      'binary.json': 'binary',
      'latin1.json': 'invalid-utf8',
      'bad-json.json': 'invalid-json',
      'bad-shape.json': 'wrong-shape',
      'dup-2.json': 'duplicate-id',
      'link-out.json': 'outside-directory',
      'huge.json': 'too-big',
      // A link inside the directory is read, and then claims good-a's id.
      'link-in.json': 'duplicate-id',
    });
    for (const problem of result.problems) {
      expect(problem.message).toContain(join(sessionsDir, problem.file));
      expect(problem.message).toMatch(/The file was skipped\.$/);
    }
    expect(result.sessions.map((session) => session.id).sort()).toEqual(['good-a', 'good-b', 'same']);
  });

  it('names the line and column of invalid JSON and the zod path of a wrong shape', async () => {
    await writeSessions(UNREADABLE);
    const { problems } = await scanAndRead(nativeSpace(sessionsDir));
    expect(problems.find((problem) => problem.file === 'bad-json.json')?.message).toContain(
      'line 3 column 16',
    );
    expect(problems.find((problem) => problem.file === 'bad-shape.json')?.message).toContain(
      'messages.0.role',
    );
  });

  it('refuses a file over the cap by its size alone', async () => {
    await writeFile(join(sessionsDir, 'big.json'), nativeDocument());
    const failure = await readFailure('big.json', 10);
    expect(failure).toBeInstanceOf(TranscriptError);
    expect(failure).toMatchObject({ reason: 'too-big', file: join(sessionsDir, 'big.json') });
    expect((failure as Error).message).toContain('limits.maxSessionBytes');
  });

  it('refuses a name that leads outside the sessions directory', async () => {
    await writeFile(join(directory.path, 'secret.json'), nativeDocument());
    const failure = await readFailure('../secret.json');
    expect(failure).toMatchObject({ reason: 'outside-directory' });
  });

  it('refuses a nesting deeper than 1,000 levels as invalid JSON', async () => {
    await writeFile(
      join(sessionsDir, 'deep.json'),
      `{"messages":[],"x":${'['.repeat(1001)}${']'.repeat(1001)}}`,
    );
    await writeFile(
      join(sessionsDir, 'fine.json'),
      `{"messages":[],"x":${'['.repeat(999)}${']'.repeat(999)}}`,
    );
    const failure = await readFailure('deep.json');
    expect(failure).toMatchObject({ reason: 'invalid-json' });
    const fine = await readTranscript('native', sessionsDir, 'fine.json');
    expect(fine.messageCount).toBe(0);
  });

  it('reports a binary or invalid UTF-8 JSONL file while streaming', async () => {
    await writeFile(
      join(sessionsDir, 'nul.jsonl'),
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'a' } })}\n\u0000\n`,
    );
    await writeFile(
      join(sessionsDir, 'utf.jsonl'),
      Buffer.concat([
        Buffer.from('{"type":"user","message":{"role":"user","content":"'),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('"}}\n'),
      ]),
    );
    await writeFile(
      join(sessionsDir, 'ok.jsonl'),
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'a' } })}\n`,
    );
    const result = await scanAndRead(claudeCodeSpace(sessionsDir));
    expect(Object.fromEntries(result.problems.map((problem) => [problem.file, problem.reason]))).toEqual({
      'nul.jsonl': 'binary',
      'utf.jsonl': 'invalid-utf8',
    });
    expect(result.sessions.map((session) => session.id)).toEqual(['ok']);
  });
});

describe('the hostile corpus (test/fixtures/hostile)', () => {
  it('gives each file the outcome expected.json names', async () => {
    const expected = JSON.parse(await readFile(join(HOSTILE_FIXTURES, 'expected.json'), 'utf8')) as Record<
      string,
      string
    >;
    delete expected.$comment;
    const result = await scanAndRead(nativeSpace(HOSTILE_FIXTURES));
    const actual: Record<string, string> = {};
    for (const name of Object.keys(expected)) actual[name] = 'ignored';
    for (const record of result.records) actual[record.file] = 'ok';
    for (const problem of result.problems) actual[problem.file] = problem.reason;
    // expected.json describes the corpus; read as a session it has the wrong shape.
    expect(actual['expected.json']).toBe('wrong-shape');
    delete actual['expected.json'];
    expect(actual).toEqual(expected);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
