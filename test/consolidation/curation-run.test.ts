/**
 * Curation inside a run, end to end: the example sessions consolidated through the real Anthropic SDK against
 * the fake server, whose scripted model answers extraction calls and curation calls; the archive written in the
 * run's transaction and undone by rollback; each refusal leaves memory as it was.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CurationConfig, type Config, type Space } from '../../src/config/schema.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { createModel } from '../../src/model/index.js';
import { ARCHIVE_FILE, loadMemory, rollbackRun } from '../../src/space/index.js';
import {
  EXAMPLE_FACTS,
  isCurationRequest,
  scriptedExtractor,
  withCurator,
  type CuratorResult,
  type PromptFact,
  type ScriptedFact,
} from '../../harness/scripted-extractor.js';
import {
  EXAMPLE_SESSIONS_DIR,
  createTestSpace,
  snapshotDirectory,
  type TestSpace,
  FORCED_RUN,
} from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { EXAMPLE_SESSION_FILES } from './helpers.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const fake = useFakeAnthropic();

function run(test: TestSpace, curation: Partial<CurationConfig> = {}, space: Space = test.space) {
  const config: Config = { ...test.config, curation: CurationConfig.parse(curation) };
  return createConsolidator({
    config,
    model: () => createModel(config.model, { retryBaseDelayMs: 1, retryMaxDelayMs: 5 }),
    now: () => NOW,
  })(space, FORCED_RUN);
}

const PORTO = '2026-11-26-moved-to-porto.json';
/** Every example session but the move to Porto: a later run learns it (a fresh user fact to curate with). */
const BEFORE_PORTO = EXAMPLE_SESSION_FILES.filter((name) => name !== PORTO);

function learnPorto(test: TestSpace): void {
  cpSync(join(EXAMPLE_SESSIONS_DIR, PORTO), join(test.space.sessionsDir, PORTO), {
    preserveTimestamps: true,
  });
}

const byTitle = (facts: readonly PromptFact[], title: string): PromptFact =>
  facts.find((fact) => fact.title === title) as PromptFact;

/** Merges the spicy-food fact and the coffee order into one fact that keeps both. */
function mergeFoodAndCoffee(type: string, facts: readonly PromptFact[]): { results: CuratorResult[] } {
  if (type !== 'user') return { results: [] };
  const spicy = byTitle(facts, "Doesn't eat spicy food");
  const coffee = byTitle(facts, 'Usual coffee order');
  return {
    results: [
      {
        title: 'Food and coffee',
        body: `${spicy.body} ${coffee.body}`,
        replaces: [spicy.id, coffee.id],
      },
    ],
  };
}

/**
 * A test space of the `examples` sessions, its model extracting the example facts and answering curation calls
 * with `curate` (by default, mergeFoodAndCoffee).
 */
function curatingSpace(
  examples: boolean | readonly string[],
  curate: Parameters<typeof withCurator>[1] = mergeFoodAndCoffee,
): TestSpace {
  fake.server.setDefault(withCurator(scriptedExtractor(EXAMPLE_FACTS), curate));
  return createTestSpace({ modelUrl: fake.url, examples });
}

describe('curation in a run', () => {
  it('makes no curation call when memory is under budget with no near-duplicates', async () => {
    const test = curatingSpace(true);
    const summary = await run(test);
    expect(summary.status).toBe('completed');
    expect(summary.curation).toBeUndefined();
    expect(fake.server.requests.filter(isCurationRequest)).toEqual([]);
  });

  it('makes no call for a type over budget when the run learned nothing of it', async () => {
    const test = curatingSpace(true);
    expect((await run(test)).status).toBe('completed');
    const summary = await run(test, { maxFactsPerType: 2 });
    expect(summary.curation).toBeUndefined();
    expect(fake.server.requests.filter(isCurationRequest)).toEqual([]);
  });

  it('merges facts over the budget into one, archives what it replaced, and rollback brings them back', async () => {
    const test = curatingSpace(BEFORE_PORTO);
    expect((await run(test)).status).toBe('completed');
    const before = snapshotDirectory(test.space.memoryDir);
    const memoryBefore = await loadMemory(test.space.memoryDir);

    learnPorto(test);
    const summary = await run(test, { maxFactsPerType: 2 });
    expect(summary.status).toBe('completed');
    expect(summary.curation).toEqual({
      types: [{ type: 'user', why: ['facts'] }],
      calls: 1,
      usage: expect.objectContaining({ inputTokens: expect.any(Number) }),
      costUsd: expect.any(Number),
      results: 1,
      merged: 2,
      refused: [],
    });
    expect(summary.calls).toBe(2);
    expect(summary.costUsd).toBeGreaterThan(0);
    // The merged two, and the Lisbon address the move to Porto superseded.
    expect(summary.archived).toBe(3);

    const memory = await loadMemory(test.space.memoryDir);
    const merged = memory.facts.find((fact) => fact.title === 'Food and coffee')!;
    expect(merged).toMatchObject({ status: 'active', type: 'user' });
    expect(merged.body).toContain('heartburn');
    expect(merged.body).toContain('Fábrica');
    const gone = memory.archived.filter((entry) => entry.reason === 'merged');
    expect(gone.map((entry) => entry.fact.title).sort()).toEqual([
      "Doesn't eat spicy food",
      'Usual coffee order',
    ]);
    for (const entry of gone) {
      expect(entry.fact.supersededBy).toBe(merged.id);
      expect(entry.runId).toBe(summary.runId);
      expect(entry.fact.sources.length).toBeGreaterThan(0);
      expect(memory.facts.some((fact) => fact.id === entry.fact.id)).toBe(false);
    }
    const userFile = readFileSync(join(test.space.memoryDir, 'user.md'), 'utf8');
    expect(userFile).not.toContain('Usual coffee order');
    const index = readFileSync(join(test.space.memoryDir, 'MEMORY.md'), 'utf8');
    for (const entry of gone) expect(index).not.toContain(entry.fact.id);
    expect(index).toContain(merged.id);

    await rollbackRun(test.space.memoryDir, summary.runId);
    const restored = snapshotDirectory(test.space.memoryDir);
    for (const file of ['user.md', 'MEMORY.md', ARCHIVE_FILE])
      expect(restored.get(file), file).toBe(before.get(file));
    expect((await loadMemory(test.space.memoryDir)).facts.map((fact) => fact.id)).toEqual(
      memoryBefore.facts.map((fact) => fact.id),
    );
  });

  it('merges two facts learned in the same run: one active fact remains, under the id the run gave it', async () => {
    const morningCoffee: ScriptedFact = {
      trigger: 'oat flat white',
      type: 'user',
      title: 'Morning coffee',
      body: 'Every morning the user orders an oat-milk flat white from Fábrica.',
    };
    fake.server.setDefault(
      withCurator(scriptedExtractor([...EXAMPLE_FACTS, morningCoffee]), (type, facts) => {
        const usual = facts.find((fact) => fact.title === 'Usual coffee order');
        const morning = facts.find((fact) => fact.title === 'Morning coffee');
        if (type !== 'user' || usual === undefined || morning === undefined) return { results: [] };
        return {
          results: [
            {
              title: 'Usual coffee order',
              body: 'Every morning the usual at Fábrica: the user orders an oat-milk flat white.',
              replaces: [usual.id, morning.id],
            },
          ],
        };
      }),
    );
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const summary = await run(test, { maxFactsPerType: 2 });
    expect(summary.status).toBe('completed');
    expect(summary.curation).toMatchObject({ results: 1, merged: 2, refused: [] });

    const memory = await loadMemory(test.space.memoryDir);
    const coffee = memory.facts.filter((fact) => /coffee/i.test(fact.title) && fact.status === 'active');
    expect(coffee.map((fact) => fact.body)).toEqual([
      'Every morning the usual at Fábrica: the user orders an oat-milk flat white.',
    ]);
    // The two facts the run learned never reached a file: they are in the archive as merged, by the run's ids.
    const gone = memory.archived.filter((entry) => entry.reason === 'merged');
    expect(gone.map((entry) => entry.fact.title).sort()).toEqual(['Morning coffee', 'Usual coffee order']);
    for (const entry of gone) expect(entry.fact.supersededBy).toBe(coffee[0]?.id);
  });

  it('refuses a curation answer that drops a fact: its facts stay as they were, the run says why', async () => {
    const test = curatingSpace(BEFORE_PORTO, (type, facts) =>
      type !== 'user'
        ? { results: [] }
        : {
            results: [
              {
                title: 'Coffee',
                body: 'The usual at Fábrica is an oat flat white.',
                replaces: [
                  byTitle(facts, "Doesn't eat spicy food").id,
                  byTitle(facts, 'Usual coffee order').id,
                ],
              },
            ],
          },
    );
    expect((await run(test)).status).toBe('completed');
    const before = await loadMemory(test.space.memoryDir);
    learnPorto(test);
    const summary = await run(test, { maxFactsPerType: 2 });
    expect(summary.curation?.refused).toEqual([
      {
        type: 'user',
        title: 'Coffee',
        reason: expect.stringMatching(/^it drops a fact: .*Doesn't eat spicy food/),
      },
    ]);
    expect(summary.notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/curation of user facts: result "Coffee" refused/),
        expect.stringMatching(/^user facts are still over the curation budget after this run \(3 facts/),
      ]),
    );
    const after = await loadMemory(test.space.memoryDir);
    for (const title of ["Doesn't eat spicy food", 'Usual coffee order']) {
      const kept = (memory: typeof after) => memory.facts.find((fact) => fact.title === title);
      expect(kept(after)).toEqual(kept(before));
    }
    expect(after.archived.filter((entry) => entry.reason === 'merged')).toEqual([]);
  });

  it("never rewrites a person's file: the result is refused and the file listed for review", async () => {
    const test = curatingSpace(true, (type, facts) => {
      if (type !== 'user') return { results: [] };
      const person = facts.find((fact) => fact.readOnly)!;
      return {
        results: [
          {
            title: 'Usual coffee order',
            body: 'The usual at Fábrica is an oat flat white, always.',
            replaces: [person.id, byTitle(facts, 'Usual coffee order').id],
          },
        ],
      };
    });
    // Not the learned coffee order in other words (reconcile would merge that into it): it adds a pastry.
    const mine =
      '---\nname: My coffee\ndescription: what I drink\ntype: user\n---\nOat flat white at Fábrica, always, with a pastel de nata.\n';
    mkdirSync(test.space.memoryDir, { recursive: true });
    writeFileSync(join(test.space.memoryDir, 'my-coffee.md'), mine);
    const summary = await run(test, { maxFactsPerType: 2 });
    expect(summary.curation?.refused).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/rewrites a person's fact .*listed for review/),
      }),
    ]);
    expect(summary.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: 'my-coffee.md',
          reason: expect.stringMatching(/is yours, so curation left it/),
        }),
      ]),
    );
    expect(readFileSync(join(test.space.memoryDir, 'my-coffee.md'), 'utf8')).toBe(mine);
  });

  it('curates the claude-code layout too: the merged facts’ files leave, the new fact has its own', async () => {
    const test = curatingSpace(BEFORE_PORTO);
    const space: Space = { ...test.space, layout: 'claude-code' };
    expect((await run(test, {}, space)).status).toBe('completed');
    learnPorto(test);
    const summary = await run(test, { maxFactsPerType: 2 }, space);
    expect(summary.curation?.merged).toBe(2);
    const memory = await loadMemory(test.space.memoryDir);
    const merged = memory.factFiles.get(memory.facts.find((fact) => fact.title === 'Food and coffee')!.id);
    expect(merged?.file).toMatch(/^user_.*\.md$/);
    const files = [...snapshotDirectory(test.space.memoryDir).keys()];
    for (const entry of memory.archived.filter((e) => e.reason === 'merged')) {
      expect(
        files.some(
          (file) =>
            readFileSync(join(test.space.memoryDir, file), 'utf8').includes(entry.fact.id) &&
            !file.startsWith('.dreamd'),
        ),
      ).toBe(false);
    }
  });
});
