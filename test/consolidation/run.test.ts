import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { ModelError } from '../../src/errors.js';
import { INDEX_LIMITS } from '../../src/memory/index.js';
import { listRuns, loadMemory, readLedger, rollbackRun } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_ACTIVE_TITLES, EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace, snapshotDirectory, type TestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { EXAMPLE_SESSION_FILES, addExampleSession } from './helpers.js';

const manual: RunRequest = { force: false, dryRun: false, trigger: 'manual' };
const NOW = new Date('2026-11-29T12:00:00Z');

const fake = useFakeAnthropic();

function consolidatorFor(test: TestSpace, now: () => Date = () => NOW) {
  return createConsolidator({
    config: test.config,
    model: () => createModel(test.config.model, { retryBaseDelayMs: 1, retryMaxDelayMs: 5 }),
    now,
  });
}

function activeTitles(facts: readonly { title: string; status: string }[]): string[] {
  return facts
    .filter((fact) => fact.status === 'active')
    .map((fact) => fact.title)
    .sort();
}

describe('consolidation run', () => {
  it('turns the example sessions into memory with each fact once and the new address superseding the old', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const summary = await consolidatorFor(test)(test.space, manual);

    expect(summary.status).toBe('completed');
    expect(summary.sessions).toHaveLength(7);
    expect(summary.calls).toBeLessThanOrEqual(2);
    expect(summary.usage.inputTokens).toBeGreaterThan(0);

    const memory = await loadMemory(test.space.memoryDir);
    expect(activeTitles(memory.facts)).toEqual(EXAMPLE_ACTIVE_TITLES);
    const addresses = memory.facts.filter((fact) => fact.title === 'Home address');
    const porto = addresses.find((fact) => fact.status === 'active')!;
    // The old address left the active files for the archive, with its successor.
    expect(addresses.filter((fact) => fact.status === 'superseded')).toEqual([]);
    const lisbon = memory.archived.find((entry) => entry.fact.title === 'Home address')!;
    expect(porto.body).toContain('Porto');
    expect(lisbon.fact.body).toContain('Lisbon');
    expect(lisbon.fact.supersededBy).toBe(porto.id);
    expect(lisbon).toMatchObject({ reason: 'superseded', runId: summary.runId });
    expect(summary.archived).toBe(1);
    expect(readFileSync(join(test.space.memoryDir, 'user.md'), 'utf8')).not.toContain('Lisbon');

    const index = readFileSync(join(test.space.memoryDir, 'MEMORY.md'), 'utf8');
    const lines = index.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
    expect(Buffer.byteLength(index)).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
    expect(lines.every((line) => [...line].length <= INDEX_LIMITS.maxLineChars)).toBe(true);
    expect(index).toContain(`user.md#${porto.id}`);
    expect(index).not.toContain(lisbon.fact.id);

    const ledger = await readLedger(test.space.memoryDir);
    expect(Object.keys(ledger.sessions).sort()).toEqual([...summary.sessions].sort());
    expect(Object.values(ledger.sessions).every((entry) => entry.runId === summary.runId)).toBe(true);
    const runs = await listRuns(test.space.memoryDir);
    expect(runs.map((run) => run.runId)).toEqual([summary.runId]);
    expect(runs[0]!.summary.added).toBe(summary.added);
  });

  it('sends the fixed instructions as a cached system prompt and the transcripts fenced as data', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    await consolidatorFor(test)(test.space, manual);
    const request = fake.server.requests[0]!;
    expect(JSON.stringify(request.body.system)).toContain('"cache_control"');
    expect(request.prompt).toMatch(/<<<DREAMD-DATA [0-9a-f]+ BEGIN>>>/);
    expect(request.prompt).toContain('last Thursday [2026-11-19]');
  });

  it('skips a space with four new sessions and runs it with --force', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: EXAMPLE_SESSION_FILES.slice(0, 4),
    });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const skipped = await consolidatorFor(test)(test.space, manual);
    expect(skipped.status).toBe('skipped');
    expect(skipped.reason).toMatch(/4 settled new sessions; 5 needed/);
    expect(fake.server.requests).toHaveLength(0);
    expect(existsSync(join(test.space.memoryDir, 'MEMORY.md'))).toBe(false);

    const forced = await consolidatorFor(test)(test.space, { ...manual, force: true });
    expect(forced.status).toBe('completed');
    expect(forced.sessions).toHaveLength(4);
  });

  it('does not run again within 24 hours, and reads nothing twice', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    await consolidatorFor(test)(test.space, manual);
    const again = await consolidatorFor(test, () => new Date(NOW.getTime() + 3_600_000))(test.space, manual);
    expect(again.status).toBe('skipped');
    const forced = await consolidatorFor(test)(test.space, { ...manual, force: true });
    expect(forced.status).toBe('skipped');
    expect(forced.reason).toMatch(/no new messages|0 settled/);
    expect(fake.server.requests).toHaveLength(1);
  });

  it('writes nothing on a dry run and shows the diff', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const before = snapshotDirectory(test.space.memoryDir);
    const summary = await consolidatorFor(test)(test.space, { ...manual, dryRun: true });
    expect(summary.status).toBe('dry-run');
    expect(summary.diff).toContain('+++ b/user.md');
    expect(summary.diff).toContain("+## Doesn't eat spicy food");
    expect(snapshotDirectory(test.space.memoryDir)).toEqual(before);
  });

  it('rolls a run back to the exact previous bytes', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: EXAMPLE_SESSION_FILES.slice(0, 3),
    });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    await consolidatorFor(test)(test.space, { ...manual, force: true });
    const memoryFiles = (snapshot: Map<string, string>) =>
      new Map([...snapshot].filter(([path]) => !path.startsWith('.dreamd')));
    const afterFirst = memoryFiles(snapshotDirectory(test.space.memoryDir));

    for (const name of ['2026-11-12-no-semicolons.json', '2026-11-26-moved-to-porto.json']) {
      addExampleSession(test, name);
    }
    const second = await consolidatorFor(test)(test.space, { ...manual, force: true });
    expect(second.superseded).toBe(1);
    expect(memoryFiles(snapshotDirectory(test.space.memoryDir))).not.toEqual(afterFirst);

    await rollbackRun(test.space.memoryDir, second.runId);
    expect(memoryFiles(snapshotDirectory(test.space.memoryDir))).toEqual(afterFirst);
  });

  it('gives the same final memory when sessions arrive in reverse order', async () => {
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const forward = createTestSpace({ modelUrl: fake.url, examples: true });
    await consolidatorFor(forward)(forward.space, manual);

    const reverse = createTestSpace({ modelUrl: fake.url, examples: false });
    for (const name of [...EXAMPLE_SESSION_FILES].reverse()) {
      addExampleSession(reverse, name);
      await consolidatorFor(reverse)(reverse.space, { ...manual, force: true });
    }
    const view = async (test: TestSpace) =>
      (await loadMemory(test.space.memoryDir)).facts
        .map((fact) => `${fact.status} ${fact.type} ${fact.title}: ${fact.body}`)
        .sort();
    expect(await view(reverse)).toEqual(await view(forward));
  });

  it('writes nothing and keeps the sessions pending when the model keeps failing', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(faults.serverError());
    const before = snapshotDirectory(test.space.memoryDir);
    await expect(consolidatorFor(test)(test.space, manual)).rejects.toBeInstanceOf(ModelError);
    expect(snapshotDirectory(test.space.memoryDir)).toEqual(before);
    expect(fake.server.requests.length).toBe(3);

    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const retried = await consolidatorFor(test)(test.space, manual);
    expect(retried.status).toBe('completed');
    expect(retried.sessions).toHaveLength(7);
  });

  it('never writes output that breaks the schema', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    fake.server.setDefault(faults.badOutput());
    await expect(consolidatorFor(test)(test.space, manual)).rejects.toMatchObject({
      details: { kind: 'bad-output' },
    });
    expect(existsSync(join(test.space.memoryDir, 'MEMORY.md'))).toBe(false);
  });
});
