import { appendFile, copyFile, mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettledSessions, type ReadSettledOptions } from '../../src/transcripts/read-settled-sessions.js';
import type { TranscriptFormat } from '../../src/config/schema.js';
import type { LedgerLookup } from '../../src/memory/types.js';
import { countByStatus, type ScanEntry } from '../../src/transcripts/scan-sessions.js';
import {
  CLAUDE_CODE_FIXTURES,
  FIXTURE,
  MAX_BYTES,
  createLedger,
  ledgerEntry,
  ledgerOfFileAsItIs,
  nativeDocument,
  writeWithMtime,
  minutesAgo,
  scanAt,
} from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

function byFile(entries: readonly ScanEntry[]): Record<string, ScanEntry> {
  return Object.fromEntries(entries.map((entry) => [entry.file, entry]));
}

describe('scanSessions', () => {
  const directory = useTempDir('scan');

  it('tells settled, live and consolidated native sessions apart with a fake clock', async () => {
    const dir = directory.path;
    await writeWithMtime(join(dir, 'quiet.json'), nativeDocument({ id: 'quiet' }), minutesAgo(31));
    await writeWithMtime(
      join(dir, 'ended.json'),
      nativeDocument({ id: 'ended', endedAt: '2026-11-26T11:55:00Z' }),
      minutesAgo(2),
    );
    await writeWithMtime(join(dir, 'talking.json'), nativeDocument({ id: 'talking' }), minutesAgo(2));
    await writeWithMtime(join(dir, 'done.json'), nativeDocument({ id: 'done' }), minutesAgo(600));
    await writeWithMtime(join(dir, 'notes.txt'), 'not a session', minutesAgo(600));
    const ledger = await ledgerOfFileAsItIs(dir, { sessionId: 'done', file: 'done.json', messageCount: 2 });

    const scan = await scanAt(dir, ledger);
    const entries = byFile(scan.entries);
    expect(Object.keys(entries)).toEqual(['done.json', 'ended.json', 'quiet.json', 'talking.json']);
    expect(entries['quiet.json']).toMatchObject({ status: 'settled', sessionId: undefined, fromMessage: 0 });
    expect(entries['ended.json']).toMatchObject({ status: 'settled', sessionId: 'ended' });
    expect(entries['talking.json']).toMatchObject({ status: 'live', sessionId: 'talking' });
    expect(entries['done.json']).toMatchObject({ status: 'consolidated', sessionId: 'done', fromMessage: 2 });
    expect(countByStatus(scan)).toEqual({ live: 1, settled: 2, consolidated: 1, broken: 0, 'kept-out': 0 });
  });

  it('does not open a file the ledger already has, nor a quiet new one', async () => {
    const dir = directory.path;
    // Neither file is valid JSON: had the scanner parsed them, they would be broken.
    await writeWithMtime(join(dir, 'known.json'), 'not json', minutesAgo(1));
    await writeWithMtime(join(dir, 'quiet.json'), 'not json', minutesAgo(45));
    const ledger = await ledgerOfFileAsItIs(dir, { sessionId: 'k', file: 'known.json', messageCount: 3 });
    const scan = await scanAt(dir, ledger);
    expect(byFile(scan.entries)['known.json']?.status).toBe('consolidated');
    expect(byFile(scan.entries)['quiet.json']?.status).toBe('settled');
  });

  it('reports a recently modified native file that does not parse as broken', async () => {
    await writeWithMtime(join(directory.path, 'half.json'), '{"messages": [', minutesAgo(1));
    const scan = await scanAt(directory.path, createLedger());
    expect(scan.entries[0]).toMatchObject({ file: 'half.json', status: 'broken', reason: 'invalid-json' });
    expect(scan.entries[0]?.message).toContain(join(directory.path, 'half.json'));
  });

  it('marks the second of two recent files with one session id as duplicate-id', async () => {
    await writeWithMtime(
      join(directory.path, 'a.json'),
      nativeDocument({ id: 'twin', endedAt: '2026-11-26T11:59:00Z' }),
      minutesAgo(1),
    );
    await writeWithMtime(
      join(directory.path, 'b.json'),
      nativeDocument({ id: 'twin', endedAt: '2026-11-26T11:59:00Z' }),
      minutesAgo(1),
    );
    const scan = await scanAt(directory.path, createLedger());
    expect(byFile(scan.entries)['a.json']?.status).toBe('settled');
    expect(byFile(scan.entries)['b.json']).toMatchObject({ status: 'broken', reason: 'duplicate-id' });
  });

  it('keeps Claude Code sessions live until quiet and ignores sub-agent files', async () => {
    const dir = directory.path;
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.helloWorld), join(dir, 'hello.jsonl'));
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.summaryTask), join(dir, 'summary.jsonl'));
    await utimes(join(dir, 'hello.jsonl'), minutesAgo(5), minutesAgo(5));
    await utimes(join(dir, 'summary.jsonl'), minutesAgo(90), minutesAgo(90));
    await mkdir(join(dir, 'hello', 'subagents'), { recursive: true });
    await copyFile(
      join(CLAUDE_CODE_FIXTURES, FIXTURE.compactBoundary),
      join(dir, 'hello', 'subagents', 'agent-a1.jsonl'),
    );
    await writeFile(join(dir, 'settings.json'), '{}');
    const ledger = createLedger();
    const scan = await scanAt(dir, ledger, 'claude-code');
    expect(scan.entries.map((entry) => [entry.file, entry.status])).toEqual([
      ['hello.jsonl', 'live'],
      ['summary.jsonl', 'settled'],
    ]);
    const { sessions, problems } = await readSettledSessions(scan, { ledger, maxBytes: MAX_BYTES });
    expect(problems).toEqual([]);
    expect(sessions.map((session) => [session.id, session.messages.length])).toEqual([
      ['0790ea37-90df-4d30-8fdf-0bfe301b8f3e', 4],
    ]);
  });
});

describe('readSettledSessions', () => {
  const directory = useTempDir('settled');

  /** A ledger of session `sessionId`, consolidated with `messageCount` messages when `file` was as it is now. */
  function consolidatedAsItIs(file: string, sessionId: string, messageCount: number) {
    return ledgerOfFileAsItIs(directory.path, { sessionId, file, messageCount });
  }

  /** Scans the folder as a space of `format` against `ledger`, and reads the settled sessions it finds. */
  async function scanAndRead(
    ledger: LedgerLookup,
    options: Partial<ReadSettledOptions> = {},
    format: TranscriptFormat = 'native',
  ) {
    const scan = await scanAt(directory.path, ledger, format);
    return { scan, result: await readSettledSessions(scan, { ledger, maxBytes: MAX_BYTES, ...options }) };
  }

  it('reads only the new messages of a session that grew after it was consolidated', async () => {
    const file = join(directory.path, 'grow.json');
    const messages: unknown[] = [
      { role: 'user', content: 'I live in Lisbon.' },
      { role: 'assistant', content: 'Noted.' },
    ];
    await writeWithMtime(file, nativeDocument({ id: 'grow', messages }), minutesAgo(120));
    const ledger = await consolidatedAsItIs('grow.json', 'grow', 2);
    const unchanged = await scanAt(directory.path, ledger);
    expect(unchanged.entries[0]?.status).toBe('consolidated');

    messages.push({ role: 'user', content: 'I moved to Porto.' }, { role: 'assistant', content: 'Updated.' });
    await writeWithMtime(file, nativeDocument({ id: 'grow', messages }), minutesAgo(60));
    const { scan, result } = await scanAndRead(ledger);
    expect(scan.entries[0]).toMatchObject({ status: 'settled', fromMessage: 2, sessionId: 'grow' });
    expect(result.sessions).toHaveLength(1);
    expect(result.sessions[0]?.messageCount).toBe(4);
    expect(result.sessions[0]?.messages.map((message) => message.index)).toEqual([2, 3]);
    const grown = await stat(file);
    expect(result.records).toEqual([
      {
        sessionId: 'grow',
        file: 'grow.json',
        size: grown.size,
        mtimeMs: grown.mtimeMs,
        messageCount: 4,
        newMessages: 2,
      },
    ]);
  });

  it('treats a changed file with no new message as consolidated', async () => {
    const file = join(directory.path, 'touched.json');
    await writeWithMtime(file, nativeDocument({ id: 'touched' }), minutesAgo(120));
    const ledger = await consolidatedAsItIs('touched.json', 'touched', 2);
    // Rewritten with the same messages and a new end: the size and mtime change, the messages do not.
    await writeWithMtime(
      file,
      nativeDocument({ id: 'touched', endedAt: '2026-11-26T09:00:00Z' }),
      minutesAgo(90),
    );
    const { scan, result } = await scanAndRead(ledger);
    expect(scan.entries[0]?.status).toBe('settled');
    expect(result.sessions).toEqual([]);
    expect(result.records[0]).toMatchObject({ sessionId: 'touched', newMessages: 0, messageCount: 2 });
  });

  it('finds a duplicate id among quiet files only when it reads them, and keeps the ledger owner', async () => {
    const dir = directory.path;
    await writeWithMtime(join(dir, 'a-copy.json'), nativeDocument({ id: 'orig' }), minutesAgo(100));
    await writeWithMtime(
      join(dir, 'b-orig.json'),
      nativeDocument({ id: 'orig', messages: [{ role: 'user', content: 'x' }] }),
      minutesAgo(100),
    );
    const owner = await stat(join(dir, 'b-orig.json'));
    // b-orig.json was consolidated with 0 messages then grew: it stays the owner of "orig".
    const ledger = createLedger([
      ledgerEntry({
        sessionId: 'orig',
        file: 'b-orig.json',
        messageCount: 0,
        size: owner.size - 1,
        mtimeMs: owner.mtimeMs,
      }),
    ]);
    const { result } = await scanAndRead(ledger);
    expect(result.problems.map((problem) => [problem.file, problem.reason])).toEqual([
      ['a-copy.json', 'duplicate-id'],
    ]);
    expect(result.sessions.map((session) => session.file)).toEqual([join(dir, 'b-orig.json')]);
  });

  it('stops after maxSessions sessions with new messages', async () => {
    for (const name of ['s1', 's2', 's3']) {
      await writeWithMtime(
        join(directory.path, `${name}.json`),
        nativeDocument({ id: name }),
        minutesAgo(100),
      );
    }
    const { result } = await scanAndRead(createLedger(), { maxSessions: 2 });
    expect(result.sessions.map((session) => session.id)).toEqual(['s1', 's2']);
  });

  it('stops keeping messages once keepChars are spent, cuts that session and leaves the rest unread', async () => {
    const messages = Array.from({ length: 4 }, (_, index) => ({
      role: 'user',
      content: `${index}`.repeat(10),
    }));
    for (const name of ['s1', 's2', 's3']) {
      await writeWithMtime(
        join(directory.path, `${name}.json`),
        nativeDocument({ id: name, messages }),
        minutesAgo(100),
      );
    }
    // 40 characters for s1 whole, 15 more: two messages of s2 (the second reaches the window), none of s3.
    const { result } = await scanAndRead(createLedger(), { keepChars: 55 });
    expect(
      result.sessions.map((session) => [session.id, session.messages.length, session.keptUntil]),
    ).toEqual([
      ['s1', 4, undefined],
      ['s2', 2, 2],
    ]);
    expect(result.records.map((record) => [record.sessionId, record.messageCount])).toEqual([
      ['s1', 4],
      ['s2', 4],
    ]);
    // A native file says its id only when read: the one not read is named by its file.
    expect(result.unread).toEqual(['s3.json']);
  });

  it('lets a grown Claude Code file be read from its ledger count', async () => {
    const file = join(directory.path, 'cc.jsonl');
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.helloWorld), file);
    const ledger = await consolidatedAsItIs('cc.jsonl', 'de3b8b19-5bc0-4a2a-934a-1b6806567e25', 8);
    await appendFile(
      file,
      `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'now in Python' } })}\n`,
    );
    await utimes(file, minutesAgo(40), minutesAgo(40));
    const { result } = await scanAndRead(ledger, {}, 'claude-code');
    expect(result.sessions[0]?.messages).toEqual([
      { index: 8, role: 'user', ts: undefined, parts: [{ kind: 'text', text: 'now in Python' }] },
    ]);
  });
});
