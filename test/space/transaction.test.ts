import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { emptyLedger, nextLedgerContent, readLedger, createLedgerLookup } from '../../src/space/ledger.js';
import { lastSuccessfulRun, listRuns, readRun } from '../../src/space/run-history.js';
import {
  CommitIncompleteError,
  commitMemoryChanges,
  recoverMemory,
  type CommitStep,
} from '../../src/space/transaction.js';
import { StorageError, describeIoError } from '../../src/space/io-errors.js';
import { newRunId } from '../../src/space/paths.js';
import { summary } from '../memory/helpers.js';
import { snapshotDirectory } from '../support/space.js';

const folder = useTempDir('memory');

const LEDGER_ENTRY = {
  sessionId: 's-1',
  file: 's-1.json',
  messageCount: 4,
  size: 100,
  mtimeMs: 1,
  runId: 'run-1',
  consolidatedAt: '2026-12-01T00:00:00.000Z',
};

/** The old memory, alone in the folder (whatever an earlier commit left there is gone). */
async function seedOldMemory(): Promise<void> {
  await rm(folder.path, { recursive: true, force: true });
  await mkdir(path.join(folder.path, '.dreamd'), { recursive: true });
  await writeFile(path.join(folder.path, 'user.md'), 'old user\n');
  await writeFile(path.join(folder.path, 'MEMORY.md'), 'old index\n');
  await writeFile(path.join(folder.path, 'stale.md'), 'to delete\n');
}

function runOptions(faultInjection?: (step: CommitStep) => void) {
  return {
    runId: 'run-1',
    files: new Map<string, string | null>([
      ['user.md', 'new user\n'],
      ['MEMORY.md', 'new index\n'],
      ['project.md', 'created\n'],
      ['stale.md', null],
    ]),
    ledger: nextLedgerContent(emptyLedger(), [LEDGER_ENTRY]),
    runRecord: { summary: summary('run-1') },
    now: () => new Date('2026-12-01T00:00:00Z'),
    ...(faultInjection ? { faultInjection } : {}),
  };
}

/** Commits runOptions() over the folder, the process "crashing" (an error thrown) when the commit reaches `step`. */
function commitCrashingAt(step: CommitStep) {
  return commitMemoryChanges(
    folder.path,
    runOptions((reached) => {
      if (reached === step) throw new Error(`crash at ${step}`);
    }),
  );
}

describe('memory transaction', () => {
  it('writes files, ledger and run record together, with the previous bytes for rollback', async () => {
    await seedOldMemory();
    const record = await commitMemoryChanges(folder.path, runOptions());
    const files = snapshotDirectory(folder.path);
    expect(files.get('user.md')).toBe('new user\n');
    expect(files.get('project.md')).toBe('created\n');
    expect(files.has('stale.md')).toBe(false);
    expect([...files.keys()].some((file) => file.startsWith('.dreamd/staging'))).toBe(false);
    expect(record.files).toMatchObject({
      'user.md': { before: 'old user\n' },
      'project.md': { before: null },
      'stale.md': { before: 'to delete\n', afterHash: null },
    });
    expect(await readRun(folder.path, 'run-1')).toEqual(record);
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe('run-1');
    expect(createLedgerLookup(await readLedger(folder.path)).getByFile('s-1.json')).toEqual(LEDGER_ENTRY);
  });

  it('leaves all old or all new bytes after a crash at any step and recovery', async () => {
    const steps: CommitStep[] = [];
    await seedOldMemory();
    const oldBytes = snapshotDirectory(folder.path);
    await commitMemoryChanges(
      folder.path,
      runOptions((step) => steps.push(step)),
    );
    const newBytes = snapshotDirectory(folder.path);
    expect(steps).toEqual([
      'stage',
      'commit',
      'apply:0',
      'checked:project.md',
      'apply:1',
      'checked:user.md',
      'apply:2',
      'checked:MEMORY.md',
      'apply:3',
      'apply:4',
      'apply:5',
      'cleanup',
    ]);

    // A crash between a compared file's check and its rename too.
    for (const crashAt of steps) {
      await seedOldMemory();
      await expect(commitCrashingAt(crashAt)).rejects.toThrow(`crash at ${crashAt}`);
      const report = await recoverMemory(folder.path);
      const after = snapshotDirectory(folder.path);
      const committed = crashAt !== 'stage' && crashAt !== 'commit';
      expect(after, `crash at ${crashAt}`).toEqual(committed ? newBytes : oldBytes);
      if (crashAt === 'commit') expect(report.discarded).toEqual(['run-1']);
      if (committed) expect(report.finished).toEqual(['run-1']);
      // Recovering again changes nothing.
      await recoverMemory(folder.path);
      expect(snapshotDirectory(folder.path)).toEqual(after);
    }
  });

  it('takes the COMMITTED marker by its name: an empty marker (its bytes lost in a crash) still commits', async () => {
    await seedOldMemory();
    await expect(commitCrashingAt('apply:0')).rejects.toThrow('crash at apply:0');
    await writeFile(path.join(folder.path, '.dreamd/staging/run-1/COMMITTED'), '');
    expect((await recoverMemory(folder.path)).finished).toEqual(['run-1']);
    const after = snapshotDirectory(folder.path);
    expect(after.get('user.md')).toBe('new user\n');
    expect(after.has('stale.md')).toBe(false);
    expect([...after.keys()].some((file) => file.startsWith('.dreamd/staging'))).toBe(false);
  });

  it('discards a staging directory whose cleanup was cut short after the marker went', async () => {
    await seedOldMemory();
    await expect(commitCrashingAt('cleanup')).rejects.toThrow('crash at cleanup');
    const applied = snapshotDirectory(folder.path);
    await rm(path.join(folder.path, '.dreamd/staging/run-1/COMMITTED'));
    expect((await recoverMemory(folder.path)).discarded).toEqual(['run-1']);
    const after = snapshotDirectory(folder.path);
    for (const [file, bytes] of after) expect(applied.get(file), file).toBe(bytes);
    expect([...after.keys()].some((file) => file.startsWith('.dreamd/staging'))).toBe(false);
  });

  it('refuses paths outside the memory directory and dreamd state', async () => {
    await expect(
      commitMemoryChanges(folder.path, { ...runOptions(), files: new Map([['../evil.md', 'x']]) }),
    ).rejects.toThrow(/plain relative path/);
    await expect(
      commitMemoryChanges(folder.path, { ...runOptions(), files: new Map([['.dreamd/lock', 'x']]) }),
    ).rejects.toThrow(/dreamd's own state/);
    expect(await listRuns(folder.path)).toEqual([]);
  });

  it('moves memory files first, the index after them, deletions after the index, then ledger and record', async () => {
    await seedOldMemory();
    const order: CommitStep[] = [];
    await commitMemoryChanges(
      folder.path,
      runOptions((step) => order.push(step)),
    );
    const manifestOrder: string[] = [];
    // What sits where after each crash point tells the order: kill before each rename in turn.
    for (const step of order.filter((name) => name.startsWith('apply:'))) {
      await seedOldMemory();
      await expect(commitCrashingAt(step)).rejects.toThrow(CommitIncompleteError);
      const files = snapshotDirectory(folder.path);
      manifestOrder.push(
        [
          files.get('project.md') === 'created\n' ? 'project' : '',
          files.get('user.md') === 'new user\n' ? 'user' : '',
          files.get('MEMORY.md') === 'new index\n' ? 'index' : '',
          files.has('stale.md') ? '' : 'deleted',
        ]
          .filter(Boolean)
          .join('+'),
      );
    }
    expect(manifestOrder.slice(0, 4)).toEqual(['', 'project', 'project+user', 'project+user+index']);
  });

  it('says a failure after the commit point left the commit partly applied, never "unchanged"', async () => {
    await seedOldMemory();
    const error = await commitMemoryChanges(
      folder.path,
      runOptions((step) => {
        if (step === 'apply:2') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CommitIncompleteError);
    expect(error).toMatchObject({ runId: 'run-1', applied: 2 });
    expect((error as Error).message).toMatch(
      /committed but only 2 of \d+ files are in place: .*ENOSPC.*disk is full/,
    );
    expect((await recoverMemory(folder.path)).finished).toEqual(['run-1']);
    expect(snapshotDirectory(folder.path).get('MEMORY.md')).toBe('new index\n');
  });

  it('keeps history.keepRuns records, deleting the oldest in the same commit, and always the last consolidation', async () => {
    const stamps = [
      '2026-12-01T00:00:01Z',
      '2026-12-01T00:00:02Z',
      '2026-12-01T00:00:03Z',
      '2026-12-01T00:00:04Z',
      '2026-12-01T00:00:05Z',
    ];
    const ids: string[] = [];
    for (const [index, stamp] of stamps.entries()) {
      const runId = newRunId(new Date(stamp), index === 0 ? 'run' : 'forget');
      ids.push(runId);
      const record = summary(runId);
      await commitMemoryChanges(folder.path, {
        runId,
        files: new Map([['user.md', `version ${index}\n`]]),
        runRecord: index === 0 ? { summary: record } : { summary: record, kind: 'forget' },
        now: () => new Date(stamp),
        keepRuns: 2,
      });
    }
    // The newest two, and the only consolidation (the time gate reads it), kept; the rest deleted.
    expect((await listRuns(folder.path)).map((run) => run.runId)).toEqual([ids[0], ids[3], ids[4]]);
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe(ids[0]);
  });

  it('names the file and the fix for a full disk and a read-only file system', () => {
    const full = describeIoError(
      Object.assign(new Error('x'), { code: 'ENOSPC' }),
      '.dreamd/staging/run-1',
      'stage',
    );
    expect(full).toBeInstanceOf(StorageError);
    expect((full as Error).message).toBe(
      '.dreamd/staging/run-1: could not stage (ENOSPC): the disk is full; free space on it (or move the memory directory) and run again',
    );
    const readOnly = describeIoError(
      Object.assign(new Error('x'), { code: 'EROFS' }),
      'memory/MEMORY.md',
      'write',
    );
    expect((readOnly as Error).message).toMatch(
      /^memory\/MEMORY\.md: could not write \(EROFS\): the file system is mounted read-only; remount it/,
    );
    const other = Object.assign(new Error('gone'), { code: 'ENOENT' });
    expect(describeIoError(other, 'x', 'y')).toBe(other);
  });
});
