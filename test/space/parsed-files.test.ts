/**
 * Files parsed once per change: the scheduler's tick reads each space's ledger and last run record through
 * readers that keep what they parsed while the file is unchanged. A change of any kind (replaced by rename,
 * written in place, deleted) is read again; through the real run, an inspection after a run or a rollback sees
 * what it wrote.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInspectReads, inspectSpaceDetailed } from '../../src/consolidation/inspect.js';
import { createParsedFileReader } from '../../src/space/parsed-files.js';
import { rollbackRun } from '../../src/space/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic, useTempDir } from '../support/fixtures.js';
import { createTestSpace, fastConsolidator, FORCED_RUN } from '../support/space.js';

const folder = useTempDir('parsed');

/** A reader of JSON files that counts its parses. */
function countingReader() {
  const parsed = { count: 0 };
  const read = createParsedFileReader((text) => {
    parsed.count += 1;
    return JSON.parse(text) as { n: number };
  });
  return { read, parsed };
}

describe('createParsedFileReader', () => {
  it('parses a file once while it is unchanged, and hands back the same value', async () => {
    const file = join(folder.path, 'ledger.json');
    await writeFile(file, '{"n":1}');
    const { read, parsed } = countingReader();
    const first = await read(file);
    expect(first).toEqual({ n: 1 });
    expect(await read(file)).toBe(first);
    expect(parsed.count).toBe(1);
  });

  it('reads again a file replaced by rename, written in place, or deleted', async () => {
    const file = join(folder.path, 'ledger.json');
    await writeFile(file, '{"n":1}');
    const { read, parsed } = countingReader();
    await read(file);
    // Replaced by rename, the same size: another inode.
    await writeFile(`${file}.tmp`, '{"n":2}');
    await rename(`${file}.tmp`, file);
    expect(await read(file)).toEqual({ n: 2 });
    // Written in place, the same size.
    await writeFile(file, '{"n":3}');
    expect(await read(file)).toEqual({ n: 3 });
    expect(parsed.count).toBe(3);
    await rm(file);
    expect(await read(file)).toBeNull();
    await writeFile(file, '{"n":4}');
    expect(await read(file)).toEqual({ n: 4 });
  });

  it('throws what the parse throws, keeps nothing of it, and reads the mended file', async () => {
    const file = join(folder.path, 'ledger.json');
    await writeFile(file, '{"n":');
    const { read } = countingReader();
    await expect(read(file)).rejects.toThrow(SyntaxError);
    await expect(read(file)).rejects.toThrow(SyntaxError);
    await writeFile(file, '{"n":5}');
    expect(await read(file)).toEqual({ n: 5 });
  });
});

describe("the scheduler's inspections with shared readers", () => {
  const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

  it('see the ledger and the last run a run writes, and the ledger a rollback writes', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const now = new Date('2026-12-10T12:00:00Z');
    const shared = { config: test.config, now: () => now, reads: createInspectReads() };
    /** The inspection with the shared readers, after checking it is what a fresh read sees. */
    const inspect = async () => {
      const kept = (await inspectSpaceDetailed(test.space, shared)).inspection;
      const fresh = (await inspectSpaceDetailed(test.space, { config: test.config, now: () => now }))
        .inspection;
      expect(kept).toEqual(fresh);
      return kept;
    };
    const before = await inspect();
    expect(before.settledNew).toBeGreaterThan(0);
    expect(before.lastSuccessfulRunAt).toBeUndefined();
    expect(await inspect()).toEqual(before);

    const run = await fastConsolidator(test.config, { now: () => now })(test.space, FORCED_RUN);
    expect(run.status).toBe('completed');
    const after = await inspect();
    expect(after.settledNew).toBe(0);
    expect(after.lastSuccessfulRunAt).toBe(now.toISOString());

    await rollbackRun(test.space.memoryDir, run.runId);
    expect((await inspect()).settledNew).toBe(before.settledNew);
  });
});
