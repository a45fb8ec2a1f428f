import { appendFile, copyFile, mkdir, readFile, symlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettledSessions } from '../../src/transcripts/read-settled-sessions.js';
import { scanSessions, type ScanEntry } from '../../src/transcripts/scan-sessions.js';
import {
  CODEX_FIXTURE,
  CODEX_FIXTURES,
  MAX_BYTES,
  codexSpace,
  createLedger,
  ledgerOfFileAsItIs,
  minutesAgo,
  scanAt,
  NOW,
} from './helpers.js';
import { useTempDir, createTempDir } from '../support/fixtures.js';

const ROLLOUT = join(
  '2025',
  '11',
  '22',
  'rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl',
);
const EXEC = join(
  '2025',
  '10',
  '29',
  'rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl',
);

function statuses(entries: readonly ScanEntry[]): Record<string, string> {
  return Object.fromEntries(entries.map((entry) => [entry.file, entry.status]));
}

describe('scanning a Codex sessions folder', () => {
  const directory = useTempDir('codex-scan');

  async function place(relative: string, fixture: string, mtime: Date): Promise<string> {
    const path = join(directory.path, relative);
    await mkdir(join(path, '..'), { recursive: true });
    await copyFile(join(CODEX_FIXTURES, fixture), path);
    await utimes(path, mtime, mtime);
    return path;
  }

  it('finds rollouts in the dated folders: quiet ones settled, recent ones live (a rollout has no end marker)', async () => {
    await place(ROLLOUT, CODEX_FIXTURE.head, minutesAgo(31));
    await place(EXEC, CODEX_FIXTURE.twoPlusTwo, minutesAgo(2));
    await place(join('.trash', 'rollout-old.jsonl'), CODEX_FIXTURE.tail, minutesAgo(600));
    await place(join('2025', '11', '.hidden', 'rollout-h.jsonl'), CODEX_FIXTURE.tail, minutesAgo(600));
    await place(join('2025', '11', '22', 'notes.txt'), CODEX_FIXTURE.tail, minutesAgo(600));
    const scan = await scanAt(directory.path, createLedger(), 'codex');
    expect(scan.format).toBe('codex');
    expect(statuses(scan.entries)).toEqual({ [EXEC]: 'live', [ROLLOUT]: 'settled' });
  });

  it('never enters a linked folder, and refuses a linked rollout that leads outside', async () => {
    const outside = await createTempDir('codex-outside');
    try {
      await mkdir(join(outside.path, 'day'), { recursive: true });
      await copyFile(join(CODEX_FIXTURES, CODEX_FIXTURE.head), join(outside.path, 'day', 'rollout-a.jsonl'));
      await mkdir(join(directory.path, '2025'), { recursive: true });
      await symlink(join(outside.path, 'day'), join(directory.path, '2025', '11'));
      await symlink(
        join(outside.path, 'day', 'rollout-a.jsonl'),
        join(directory.path, '2025', 'rollout-b.jsonl'),
      );
      const scan = await scanAt(directory.path, createLedger(), 'codex');
      expect(scan.entries).toEqual([
        expect.objectContaining({
          file: join('2025', 'rollout-b.jsonl'),
          status: 'broken',
          reason: 'outside-directory',
        }),
      ]);
    } finally {
      await outside.remove();
    }
  });

  it('marks a consolidated rollout by its path under the sessions folder, and reads once only what it grew by', async () => {
    const path = await place(ROLLOUT, CODEX_FIXTURE.head, minutesAgo(600));
    const ledger = await ledgerOfFileAsItIs(directory.path, {
      sessionId: '019aad50-a7e6-7422-b7a8-0b384290624f',
      file: ROLLOUT,
      messageCount: 5,
    });
    const options = { space: codexSpace(directory.path), ledger, quietMinutes: 30, maxBytes: MAX_BYTES };
    const unchanged = await scanSessions({ ...options, now: NOW });
    expect(statuses(unchanged.entries)).toEqual({ [ROLLOUT]: 'consolidated' });

    await appendFile(path, await readFile(join(CODEX_FIXTURES, CODEX_FIXTURE.tail)));
    await utimes(path, minutesAgo(5), minutesAgo(5));
    const growing = await scanSessions({ ...options, now: NOW });
    expect(growing.entries).toEqual([
      expect.objectContaining({ file: ROLLOUT, status: 'live', fromMessage: 5 }),
    ]);

    const quiet = await scanSessions({ ...options, now: new Date(NOW.getTime() + 30 * 60_000) });
    expect(quiet.entries).toEqual([
      expect.objectContaining({ file: ROLLOUT, status: 'settled', fromMessage: 5 }),
    ]);
    const { sessions, records, problems } = await readSettledSessions(quiet, { ledger, maxBytes: MAX_BYTES });
    expect(problems).toEqual([]);
    expect(sessions.map((session) => [session.id, session.messages.map((message) => message.index)])).toEqual(
      [['019aad50-a7e6-7422-b7a8-0b384290624f', [5, 6, 7]]],
    );
    expect(records).toEqual([expect.objectContaining({ file: ROLLOUT, messageCount: 8, newMessages: 3 })]);
  });
});
