/**
 * A space that ran with topic files moves to the `claude-code` layout: the first run with the new layout makes
 * each active fact a file of its own (ids, sources and dates kept), in its one transaction, and `rollback`
 * of that run gives the topic files back. Real consolidation runs, the real SDK against the fake fake.server.
 */
import { cpSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Space } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { parseFactFile } from '../../src/memory/fact-file.js';
import { splitIndexFile } from '../../src/memory/index-block.js';
import type { Fact } from '../../src/memory/types.js';
import { createModel } from '../../src/model/index.js';
import { forgetFact, loadMemory, rollbackRun } from '../../src/space/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import {
  EXAMPLE_SESSIONS_DIR as EXAMPLE_SESSIONS,
  createTestSpace,
  snapshotDirectory,
  type TestSpace,
  fastConsolidator,
  FORCED_RUN,
} from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
let test: TestSpace;
beforeEach(async () => {
  test = createTestSpace({ modelUrl: fake.url, examples: true });
});

function consolidate(space: Space) {
  return fastConsolidator(test.config)(space, FORCED_RUN);
}

/** What must survive the move: everything but where the fact lives. */
const kept = (fact: Fact) => ({
  id: fact.id,
  type: fact.type,
  title: fact.title,
  body: fact.body,
  why: fact.why,
  howToApply: fact.howToApply,
  observed: fact.observed,
  updated: fact.updated,
  sources: fact.sources,
  status: fact.status,
});

const memoryFiles = (directory: string): Map<string, string> =>
  new Map([...snapshotDirectory(directory)].filter(([file]) => !file.startsWith('.')));

describe('moving a topics space to the claude-code layout', () => {
  it('makes each active fact a file of its own in one run, and rollback of that run gives the topic files back', async () => {
    const memoryDir = test.space.memoryDir;
    expect((await consolidate(test.space)).status).toBe('completed');
    const topics = memoryFiles(memoryDir);
    expect([...topics.keys()].sort()).toEqual([
      'MEMORY.md',
      'feedback.md',
      'project.md',
      'reference.md',
      'user.md',
    ]);
    const before = await loadMemory(memoryDir);
    const active = before.facts.filter((fact) => fact.status === 'active');
    // The superseded address is in the archive, not in the topic files.
    expect(before.archived.map((entry) => entry.fact.status)).toEqual(['superseded']);

    const moved = await consolidate({ ...test.space, layout: 'claude-code' });
    expect(moved.status).toBe('completed');
    const after = memoryFiles(memoryDir);
    // The topic files are gone: each active fact is a file of its own, with its id, sources and dates.
    for (const topic of ['user.md', 'feedback.md', 'project.md', 'reference.md'])
      expect(after.has(topic)).toBe(false);
    const files = [...after.keys()].filter((file) => file !== 'MEMORY.md').sort();
    expect(files).toHaveLength(active.length);
    const read = files.map((file) => parseFactFile(after.get(file) ?? '', file)?.fact);
    expect(read.map((fact) => (fact === undefined ? undefined : kept(fact)))).toEqual(
      expect.arrayContaining(active.map(kept)),
    );
    // The superseded address left the active files (the run record keeps it); the index links each file once.
    const block = splitIndexFile(after.get('MEMORY.md') ?? '').blockLines;
    for (const file of files) expect(block.filter((line) => line.includes(`](${file})`))).toHaveLength(1);
    expect(block.join('\n')).not.toContain('#f-');
    const reloaded = await loadMemory(memoryDir);
    expect(reloaded.layout).toBe('claude-code');
    expect(reloaded.facts.filter((fact) => fact.status === 'active').map(kept)).toEqual(
      expect.arrayContaining(active.map(kept)),
    );

    // One transaction: rolling the run back restores every byte of the topic layout.
    await rollbackRun(memoryDir, moved.runId);
    expect(memoryFiles(memoryDir)).toEqual(topics);
    expect((await loadMemory(memoryDir)).facts.map(kept)).toEqual(before.facts.map(kept));
  });

  it("a later supersede deletes the old fact's file, and the newer fact has a file of its own", async () => {
    const lisbonOnly = createTestSpace({
      modelUrl: fake.url,
      examples: ['2026-11-02-lisbon-delivery.json'],
    });
    const memoryDir = lisbonOnly.space.memoryDir;
    const space: Space = { ...lisbonOnly.space, layout: 'claude-code' };
    const run = () =>
      createConsolidator({ config: lisbonOnly.config, model: () => createModel(lisbonOnly.config.model) })(
        space,
        FORCED_RUN,
      );
    expect((await run()).status).toBe('completed');
    const first = memoryFiles(memoryDir);
    expect([...first.keys()].sort()).toEqual(['MEMORY.md', 'user_home_address.md']);
    const lisbon = parseFactFile(first.get('user_home_address.md') ?? '', 'user_home_address.md')?.fact;
    expect(lisbon?.body).toContain('Lisbon');
    // The move to Porto arrives: its fact supersedes the Lisbon one.
    cpSync(
      join(EXAMPLE_SESSIONS, '2026-11-26-moved-to-porto.json'),
      join(lisbonOnly.space.sessionsDir, 'porto.json'),
    );
    const old = new Date('2026-11-27T00:00:00Z');
    utimesSync(join(lisbonOnly.space.sessionsDir, 'porto.json'), old, old);
    expect((await run()).status).toBe('completed');
    const after = memoryFiles(memoryDir);
    const addresses = [...after].filter(([file, text]) => file !== 'MEMORY.md' && text.includes('Lives in'));
    expect(addresses).toHaveLength(1);
    expect(addresses[0]?.[1]).toContain('Lives in Porto');
    expect(addresses[0]?.[1]).not.toContain(`id: ${lisbon?.id}`);
    expect((await loadMemory(memoryDir)).facts.some((fact) => fact.id === lisbon?.id)).toBe(false);
    expect(after.get('MEMORY.md')).not.toContain('Lisbon');

    // `memory forget` removes the fact's file and its index line.
    const [portoFile, portoText] = addresses[0]!;
    const porto = parseFactFile(portoText, portoFile)?.fact;
    await forgetFact(memoryDir, porto?.id ?? '');
    const forgotten = memoryFiles(memoryDir);
    expect(forgotten.has(portoFile)).toBe(false);
    expect(forgotten.get('MEMORY.md')).not.toContain(portoFile);
    expect((await loadMemory(memoryDir)).facts.some((fact) => fact.id === porto?.id)).toBe(false);
  });
});
