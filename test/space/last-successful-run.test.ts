import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { newRunId, RUNS_DIR } from '../../src/space/paths.js';
import {
  lastSuccessfulRun,
  nextRunSeq,
  serializeRunRecord,
  type RunKind,
} from '../../src/space/run-history.js';
import { removeDir, summary } from '../memory/helpers.js';

const folder = useTempDir('memory');
beforeEach(async () => {
  await mkdir(path.join(folder.path, RUNS_DIR), { recursive: true });
});

async function writeRecord(
  runId: string,
  seq: number,
  kind: RunKind = 'consolidation',
  status: 'completed' | 'skipped' = 'completed',
): Promise<void> {
  const record = {
    version: 1 as const,
    runId,
    kind,
    seq,
    committedAt: new Date(Date.UTC(2026, 10, 1, 0, seq)).toISOString(),
    rollbackOf: undefined,
    summary: { ...summary(runId), status },
    files: {},
  };
  await writeFile(path.join(folder.path, RUNS_DIR, `${runId}.json`), serializeRunRecord(record));
}

const at = (minute: number): Date => new Date(Date.UTC(2026, 10, 1, 0, minute));

describe('lastSuccessfulRun', () => {
  it('returns the newest completed consolidation, past newer rollbacks and skipped runs', async () => {
    const first = newRunId(at(1));
    const second = newRunId(at(2));
    await writeRecord(first, 1);
    await writeRecord(second, 2);
    await writeRecord(newRunId(at(3), 'rollback'), 3, 'rollback');
    await writeRecord(newRunId(at(4)), 4, 'consolidation', 'skipped');
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe(second);
  });

  it('does not read records older than the newest completed consolidation', async () => {
    const newest = newRunId(at(5));
    await writeRecord(newest, 2);
    // An older record claiming a higher seq (which a real history never has): it wins only if it is read.
    await writeRecord(newRunId(at(1)), 9);
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe(newest);
  });

  it('orders runs started in the same second by seq', async () => {
    await writeRecord('run-20261101T000100Z-aaaaaa', 2);
    await writeRecord('run-20261101T000100Z-zzzzzz', 1);
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe('run-20261101T000100Z-aaaaaa');
  });

  it('reads every record whose name carries no time stamp and keeps the highest seq', async () => {
    await writeRecord('run-1', 1);
    await writeRecord('run-10', 3);
    await writeRecord('run-2', 2);
    await writeRecord(newRunId(at(1)), 1);
    expect((await lastSuccessfulRun(folder.path))?.runId).toBe('run-10');
  });

  it('is undefined without run history', async () => {
    await removeDir(path.join(folder.path, RUNS_DIR));
    expect(await lastSuccessfulRun(folder.path)).toBeUndefined();
  });
});

describe('nextRunSeq', () => {
  it('is 1 for an empty history, then one more than the highest seq among the newest records', async () => {
    expect(await nextRunSeq(folder.path)).toBe(1);
    await writeRecord(newRunId(at(1)), 1);
    await writeRecord(newRunId(at(2), 'rollback'), 2, 'rollback');
    // Two records started in the same second: the higher seq counts.
    await writeRecord(newRunId(at(3)), 4);
    await writeRecord(newRunId(at(3)), 3);
    expect(await nextRunSeq(folder.path)).toBe(5);
  });

  it('does not read older records', async () => {
    // An older record claiming a higher seq (which a real history never has) would win if it were read.
    await writeRecord(newRunId(at(1)), 50);
    await writeRecord(newRunId(at(2)), 7);
    expect(await nextRunSeq(folder.path)).toBe(8);
  });
});
