import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';
import { createIsForgotten, isForgotten, readForgotten } from '../../src/space/forgotten.js';
import { forgetFact } from '../../src/space/forget.js';
import { loadMemory, renderMemory } from '../../src/space/memory-dir.js';
import { listRuns } from '../../src/space/run-history.js';
import { RollbackRefusedError, rollbackRun } from '../../src/space/rollback.js';
import { commitMemoryChanges } from '../../src/space/transaction.js';
import type { Fact } from '../../src/memory/types.js';
import { fact, summary } from '../memory/helpers.js';
import { snapshotDirectory } from '../support/space.js';

const folder = useTempDir('memory');

const NOW = new Date('2026-12-01T00:00:00Z');

async function consolidate(runId: string, facts: Fact[]): Promise<void> {
  const loaded = await loadMemory(folder.path);
  const files = renderMemory(loaded, facts, { now: NOW });
  await commitMemoryChanges(folder.path, { runId, files, runRecord: { summary: summary(runId) } });
}

/** Memory files only (the run history grows with every run). */
async function memoryBytes(): Promise<Map<string, string>> {
  return new Map([...snapshotDirectory(folder.path)].filter(([file]) => !file.startsWith('.dreamd/')));
}

describe('rollback', () => {
  it('restores the exact previous bytes and deletes files the run created', async () => {
    await consolidate('run-1', [fact({ id: 'f-aaaaaaaaaa', title: 'Lives in Berlin' })]);
    const afterFirst = await memoryBytes();
    await consolidate('run-2', [
      fact({
        id: 'f-aaaaaaaaaa',
        title: 'Lives in Berlin',
        status: 'superseded',
        supersededBy: 'f-bbbbbbbbbb',
        supersededOn: '2026-11-26',
      }),
      fact({ id: 'f-bbbbbbbbbb', title: 'Lives in Hamburg' }),
      fact({ id: 'f-cccccccccc', title: 'Ships on Fridays' }, 'project'),
    ]);
    expect((await memoryBytes()).has('project.md')).toBe(true);
    const [record] = await rollbackRun(folder.path, 'run-2', { now: () => NOW });
    expect(await memoryBytes()).toEqual(afterFirst);
    expect(record).toMatchObject({ kind: 'rollback', rollbackOf: 'run-2' });
    expect(record?.summary.diff).toContain('-## Ships on Fridays');
    await expect(rollbackRun(folder.path, 'run-2')).rejects.toThrow(/already rolled back/);
  });

  it('refuses when a later run changed the same files, unless cascading', async () => {
    await consolidate('run-1', [fact({ id: 'f-aaaaaaaaaa' })]);
    await consolidate('run-2', [fact({ id: 'f-bbbbbbbbbb' })]);
    await consolidate('run-3', [fact({ id: 'f-cccccccccc' })]);
    const error = await rollbackRun(folder.path, 'run-2').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RollbackRefusedError);
    expect(error).toMatchObject({ blockingRuns: ['run-3'] });
    const records = await rollbackRun(folder.path, 'run-2', { cascade: true });
    expect(records.map((record) => record.rollbackOf)).toEqual(['run-3', 'run-2']);
    const loaded = await loadMemory(folder.path);
    expect(loaded.facts.map((f) => f.id)).toEqual(['f-aaaaaaaaaa']);
    expect((await listRuns(folder.path)).map((run) => run.kind)).toEqual([
      'consolidation',
      'consolidation',
      'consolidation',
      'rollback',
      'rollback',
    ]);
  });

  it('refuses to overwrite a hand edit made after the run, unless forced', async () => {
    await consolidate('run-1', [fact({ id: 'f-aaaaaaaaaa' })]);
    const userFile = path.join(folder.path, 'user.md');
    await writeFile(userFile, `${await readFile(userFile, 'utf8')}\nA note of mine.\n`);
    await expect(rollbackRun(folder.path, 'run-1')).rejects.toThrow(/user\.md changed since the run/);
    await rollbackRun(folder.path, 'run-1', { force: true });
    expect(await memoryBytes()).toEqual(new Map());
  });
});

describe('forget', () => {
  it('removes the fact from its topic file and the index, remembers it, and can be rolled back', async () => {
    const spicy = fact({
      id: 'f-aaaaaaaaaa',
      title: "Doesn't eat spicy food",
      body: "The user doesn't eat spicy food.",
    });
    await consolidate('run-1', [spicy, fact({ id: 'f-bbbbbbbbbb', title: 'Likes tea' })]);
    const before = await memoryBytes();
    const { record } = await forgetFact(folder.path, 'f-aaaaaaaaaa', { now: () => NOW });
    const memory = await memoryBytes();
    expect(memory.get('user.md')).not.toContain('spicy');
    expect(memory.get('MEMORY.md')).not.toContain('f-aaaaaaaaaa');
    expect(memory.get('user.md')).toContain('Likes tea');
    expect(record.kind).toBe('forget');

    const forgotten = await readForgotten(folder.path);
    expect(
      isForgotten(forgotten, { title: 'Does not eat spicy food', body: 'The user doesnt eat spicy food!' }),
    ).toBe(true);
    expect(isForgotten(forgotten, { title: "Doesn't eat spicy food", body: 'Rephrased entirely.' })).toBe(
      true,
    );
    expect(isForgotten(forgotten, { id: 'f-aaaaaaaaaa', title: 'x', body: 'y' })).toBe(true);
    expect(isForgotten(forgotten, { title: 'Likes tea', body: 'Body of f-bbbbbbbbbb.' })).toBe(false);
    expect(createIsForgotten(forgotten)({ title: 'Other', body: "the user doesn't eat spicy food" })).toBe(
      true,
    );

    await rollbackRun(folder.path, record.runId);
    expect(await memoryBytes()).toEqual(before);
    expect((await readForgotten(folder.path)).facts).toEqual([]);
  });

  it('says which fact was not found', async () => {
    await expect(forgetFact(folder.path, 'f-nonexisten')).rejects.toThrow(/no fact f-nonexisten/);
  });
});
