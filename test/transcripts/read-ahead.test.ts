import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptError, TranscriptErrorReason } from '../../src/errors.js';
import { fetchSessionFile, readSessionFile } from '../../src/transcripts/read-session.js';
import { readSettledSessions, type ReadSettledOptions } from '../../src/transcripts/read-settled-sessions.js';
import { scanSessions } from '../../src/transcripts/scan-sessions.js';
import { MAX_BYTES, createLedger, nativeDocument, nativeSpace } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

/** Every file settled: a clock far after any mtime. */
const LATER = new Date('2100-01-01T00:00:00Z');

/** A native session of `count` user messages of 100 characters each. */
function longSession(id: string, count: number): string {
  return nativeDocument({
    id,
    messages: Array.from({ length: count }, (_, index) => ({
      role: 'user',
      content: `${id} message ${index} `.padEnd(100, 'x'),
    })),
  });
}

describe('readSettledSessions fetches the next files while it parses one (read-ahead)', () => {
  const directory = useTempDir('read-ahead');

  /** Scans, runs `afterScan`, then reads what the scan found settled. */
  async function scanAndRead(
    options: Pick<ReadSettledOptions, 'keepChars' | 'maxSessions' | 'onSession'> = {},
    afterScan: () => Promise<void> = () => Promise.resolve(),
  ) {
    const ledger = createLedger();
    const space = nativeSpace(directory.path);
    const scan = await scanSessions({ space, ledger, now: LATER, quietMinutes: 30, maxBytes: 4_000 });
    await afterScan();
    return readSettledSessions(scan, { ledger, maxBytes: 4_000, ...options });
  }

  it('gives the sessions, records and problems of reading one file after the other', async () => {
    // Twelve files, more than the read-ahead window, with failures of the parse (invalid JSON, a duplicate
    // id) and of the fetch (a file gone since the scan) between good ones.
    const files: Record<string, string> = {};
    for (let index = 0; index < 12; index += 1) {
      const name = `s${String(index).padStart(2, '0')}.json`;
      files[name] = nativeDocument({ id: `session-${index}` });
    }
    files['s03.json'] = '{ "messages": [,] }';
    files['s07.json'] = nativeDocument({ id: 'session-2' });
    for (const [name, text] of Object.entries(files)) await writeFile(join(directory.path, name), text);

    // s09.json is gone after the scan: its fetch fails while earlier files are parsed.
    const read = await scanAndRead({}, () => unlink(join(directory.path, 's09.json')));

    const good = [0, 1, 2, 4, 5, 6, 8, 10, 11];
    expect(read.sessions.map((session) => session.id)).toEqual(good.map((index) => `session-${index}`));
    expect(read.records.map((record) => record.file)).toEqual(
      good.map((index) => `s${String(index).padStart(2, '0')}.json`),
    );
    expect(read.problems.map((problem) => [problem.file, problem.reason])).toEqual([
      ['s03.json', TranscriptErrorReason.invalidJson],
      ['s07.json', TranscriptErrorReason.duplicateId],
      ['s09.json', TranscriptErrorReason.unreadable],
    ]);
    for (const session of read.sessions) {
      const alone = await readSessionFile(`s${session.id.slice('session-'.length).padStart(2, '0')}.json`, {
        format: 'native',
        sessionsDir: directory.path,
        maxBytes: MAX_BYTES,
      });
      expect(session).toEqual(alone.session);
    }
  });

  it('drops a failure fetched ahead of a keep budget that ran out: the file waits, unreported', async () => {
    await writeFile(join(directory.path, 'a.json'), longSession('a', 20));
    await writeFile(join(directory.path, 'b.json'), longSession('b', 2));
    await writeFile(join(directory.path, 'c.json'), longSession('c', 2));

    // b.json is gone after the scan: its fetch, started while a.json is parsed, fails, and is never taken
    // (a.json spends the whole budget). The failure must not escape as an unhandled rejection either.
    const read = await scanAndRead({ keepChars: 500 }, () => unlink(join(directory.path, 'b.json')));

    expect(read.sessions.map((session) => [session.id, session.keptUntil])).toEqual([['a', 5]]);
    expect(read.problems).toEqual([]);
    expect(read.unread).toEqual(['b.json', 'c.json']);
  });

  it('hands each session to onSession as it is read and keeps none itself, counting them for maxSessions', async () => {
    for (const id of ['a', 'b', 'c', 'd']) {
      await writeFile(join(directory.path, `${id}.json`), nativeDocument({ id }));
    }
    const handed: string[] = [];

    const read = await scanAndRead({ maxSessions: 3, onSession: (session) => handed.push(session.id) });

    expect(handed).toEqual(['a', 'b', 'c']);
    expect(read.sessions).toEqual([]);
    expect(read.records.map((record) => record.file)).toEqual(['a.json', 'b.json', 'c.json']);
  });

  it('lets timers run while it reads many small files (read synchronously) and digests them', async () => {
    for (let index = 0; index < 40; index += 1) {
      await writeFile(join(directory.path, `s${String(index).padStart(2, '0')}.json`), nativeDocument());
    }
    let handed = 0;
    let timerRanAfter: number | undefined;

    await scanAndRead({
      onSession: () => {
        handed += 1;
        // A timer set at the first session (a lock's heartbeat, say) runs before the last one is read.
        if (handed === 1) setTimeout(() => (timerRanAfter = handed), 0);
        const busyUntil = performance.now() + 1;
        while (performance.now() < busyUntil);
      },
    });

    expect(handed).toBe(40);
    expect(timerRanAfter).toBeDefined();
    expect(timerRanAfter).toBeLessThan(40);
  });

  it('stops at maxSessions with the files fetched ahead of it left unread', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f'])
      await writeFile(join(directory.path, `${id}.json`), nativeDocument({ id }));

    const read = await scanAndRead({ maxSessions: 2 });

    expect(read.sessions.map((session) => session.id)).toEqual(['a', 'b']);
    expect(read.records.map((record) => record.file)).toEqual(['a.json', 'b.json']);
  });
});

describe('fetchSessionFile', () => {
  const directory = useTempDir('fetch-session');
  const options = { format: 'native', sessionsDir: '', maxBytes: 4_000 } as const;

  it('reads the bytes first and keeps what the later parse is told to keep', async () => {
    await writeFile(join(directory.path, 'a.json'), longSession('a', 20));
    const fetched = await fetchSessionFile('a.json', { ...options, sessionsDir: directory.path });

    const kept = await fetched({ keepChars: 500, fromMessage: 2 });
    const whole = await fetched({});

    expect(kept.session.messages.map((message) => message.index)).toEqual([2, 3, 4, 5, 6]);
    expect(kept.session.keptUntil).toBe(7);
    expect(whole.session.messages).toHaveLength(20);
    expect(kept.size).toBe(whole.size);
  });

  it('throws a file it must not read before reading it, and a file it cannot parse at the parse', async () => {
    await writeFile(join(directory.path, 'big.json'), longSession('big', 60));
    await writeFile(join(directory.path, 'bad.json'), '{ "messages": [,] }');

    const tooBig = await fetchSessionFile('big.json', { ...options, sessionsDir: directory.path }).catch(
      (error: unknown) => error,
    );
    const fetched = await fetchSessionFile('bad.json', { ...options, sessionsDir: directory.path });
    const badJson = await fetched({}).catch((error: unknown) => error);

    expect(tooBig).toBeInstanceOf(TranscriptError);
    expect((tooBig as TranscriptError).reason).toBe(TranscriptErrorReason.tooBig);
    expect(badJson).toBeInstanceOf(TranscriptError);
    expect((badJson as TranscriptError).reason).toBe(TranscriptErrorReason.invalidJson);
  });

  it('parses the bytes as they were fetched: a rewrite after the fetch is left to the next scan', async () => {
    const path = join(directory.path, 'a.json');
    await writeFile(path, nativeDocument({ id: 'a' }));
    const fetched = await fetchSessionFile('a.json', { ...options, sessionsDir: directory.path });
    // The bytes were fetched and re-stat'ed: the read is of the file as it was then, consistent in itself.
    await writeFile(path, nativeDocument({ id: 'a', messages: [{ role: 'user', content: 'changed' }] }));

    const read = await fetched({});

    // The record carries the size read, so the next scan sees the rewritten file as changed and reads it.
    expect(read.session.messages).toHaveLength(2);
    expect(read.size).toBe(Buffer.byteLength(nativeDocument({ id: 'a' })));
  });
});
