import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_CURATION } from '../../src/consolidation/curation/curate.js';
import { rankedMemoryList } from '../../src/consolidation/extraction/extract.js';
import {
  checkItems,
  checkUpdates,
  prepareUpdateCheck,
  updateCheckPrompt,
} from '../../src/consolidation/extraction/update-check.js';
import { NEIGHBOURS_PER_FACT } from '../../src/consolidation/extraction/tunables.js';
import { loadMemory, planMemoryFiles } from '../../src/space/index.js';
import type * as SpaceModule from '../../src/space/index.js';
import type { ModelProvider } from '../../src/model/types.js';
import type { Fact } from '../../src/memory/types.js';
import type { Config } from '../../src/config/schema.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import {
  checkInPrompt,
  isCurationRequest,
  isUpdateCheckRequest,
  scriptedExtractor,
  withCurator,
  type ScriptedFact,
} from '../../harness/scripted-extractor.js';
import { extractedFact, fact as memoryFact } from '../memory/helpers.js';
import { cliAt, useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, fastConsolidator, FORCED_RUN } from '../support/space.js';

// Memory files rendered, counted: the run plans its write once (its draft renders nothing).
vi.mock('../../src/space/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof SpaceModule>();
  return { ...real, planMemoryFiles: vi.fn(real.planMemoryFiles) };
});
const renders = (): number => vi.mocked(planMemoryFiles).mock.calls.length;

/**
 * The update check: a new fact whose older version its extraction call did not show (far back in memory, or
 * in a call of the same run that ran beside it) is looked at again beside its nearest facts, and the model
 * names the ones it replaces.
 */

const NOW = new Date('2026-11-29T12:00:00Z');

function memory(...facts: Partial<Fact>[]): Fact[] {
  return facts.map((fields, index) =>
    memoryFact({
      id: `f-${String(index).padStart(10, '0')}`,
      observed: '2026-01-01',
      updated: '2026-01-01',
      ...fields,
    }),
  );
}

/** The check items of `candidates` over the memory list `index`, no fact shown to their calls: runs are run-1, run-2… */
function itemsOf(candidates: readonly ExtractedFact[], index: ReturnType<typeof rankedMemoryList>) {
  return checkItems(candidates, {
    index,
    runId: (at) => `run-${at + 1}`,
    shown: candidates.map(() => new Set()),
  });
}

/** The titles of the facts listed beside `update`, the one new fact, over `facts` in memory. */
function neighbourTitles(update: ExtractedFact, facts: readonly Fact[]): string[] | undefined {
  return itemsOf([update], rankedMemoryList(facts, NOW))[0]?.neighbours.map((neighbour) => neighbour.title);
}

const porto = extractedFact({
  title: 'Home address',
  body: 'Lives in Porto, Rua do Almada 3.',
  observed: '2026-11-20',
});

describe('checkItems', () => {
  const facts = memory(
    { title: 'Home address', body: 'Lives in Lisbon, Rua das Flores 28.' },
    { title: 'Usual coffee order', body: 'An oat flat white.' },
  );
  const index = rankedMemoryList(facts, NOW);

  it('lists a new fact beside the close memory fact its call did not show, and no unrelated one', () => {
    const items = itemsOf([porto], index);
    expect(items).toEqual([
      { position: 0, neighbours: [expect.objectContaining({ id: facts[0]!.id, title: 'Home address' })] },
    ]);
    const prompt = updateCheckPrompt([porto], items);
    expect(checkInPrompt(prompt)).toEqual([
      expect.objectContaining({
        id: 'new-1',
        title: 'Home address',
        related: [{ id: facts[0]!.id, title: 'Home address' }],
      }),
    ]);
  });

  it('leaves out what the call showed, and a fact with nothing close: no call is needed', () => {
    expect(
      checkItems([porto], { index, runId: (at) => `run-${at + 1}`, shown: [new Set([facts[0]!.id])] }),
    ).toEqual([]);
    const alone = extractedFact({ title: 'Drives an electric car', body: 'A blue hatchback.' });
    expect(itemsOf([alone], index)).toEqual([]);
  });

  it('lists the run’s own older facts for the newer one only, at most a few neighbours each', () => {
    const lisbon = extractedFact({
      title: 'Home address',
      body: 'Lives in Lisbon, Rua das Flores 28.',
      observed: '2026-11-02',
    });
    const items = itemsOf([porto, lisbon], []);
    expect(items.map((item) => [item.position, item.neighbours.map((n) => n.id)])).toEqual([[0, ['run-2']]]);
    const many = Array.from({ length: 10 }, (_, at) =>
      extractedFact({
        title: `Home address ${at}`,
        body: `Lives in Lisbon, flat ${at}.`,
        observed: '2026-10-01',
      }),
    );
    const [item] = itemsOf([porto, ...many], []);
    expect(item?.neighbours).toHaveLength(NEIGHBOURS_PER_FACT);
  });
});

describe('checkItems over facts of several subjects', () => {
  it('lists the same subject’s facts before another subject’s alike ones', () => {
    const facts = memory(
      { type: 'project', title: 'Helix store', body: 'The Helix project stores its data in SQLite.' },
      { type: 'project', title: 'Atlas store', body: 'The Atlas project stores its data in SQLite.' },
      { type: 'project', title: 'Delta store', body: 'The Delta project stores its data in DynamoDB.' },
    );
    const delta = extractedFact({
      type: 'project',
      title: 'Delta store',
      body: 'The Delta project stores its data in SQLite.',
      observed: '2026-11-20',
    });
    expect(neighbourTitles(delta, facts)?.[0]).toBe('Delta store');
  });

  it('finds an update said in another language by the name it shares', () => {
    const facts = memory(
      { title: 'Kaito em Lisboa', body: 'Kaito mora em Alfama, Lisbon.' },
      { title: 'Ana em Lisboa', body: 'Ana mora em Alfama, Lisbon.' },
    );
    const tokyo = extractedFact({ title: "Kaito's home", body: 'Kaito lives in Shimokitazawa, Tokyo.' });
    expect(neighbourTitles(tokyo, facts)).toEqual(['Kaito em Lisboa']);
  });

  it('lists the fact told in another language before a crowd of the same person’s other facts', () => {
    // Ten later facts of Ana's in English share only her name with the update; the older fact it replaces,
    // told in Portuguese, shares only her name too, but the same subject in the same language would share more.
    const others = Array.from({ length: 10 }, (_, at) => ({
      title: `Ana's trip ${at}`,
      body: `Ana visited museum number ${at} with a friend.`,
      observed: `2026-02-${String(at + 10)}`,
      updated: `2026-02-${String(at + 10)}`,
    }));
    const facts = memory({ title: 'Ana tem aulas de violin.', body: 'Ana tem aulas de violin.' }, ...others);
    const cello = extractedFact({
      title: 'Ana is learning to play the cello.',
      body: 'Ana is learning to play the cello.',
      observed: '2026-03-01',
    });
    // The English trips share her name and nothing said of her: not worth the model's look.
    expect(neighbourTitles(cello, facts)).toEqual(['Ana tem aulas de violin.']);
  });

  it('shows an update worded differently the older fact of the same attribute among 150 of the person’s facts', () => {
    // Priya's job is 150 facts back; the update shares one word with it, her name. Her other facts are newer,
    // and several are states in English like the update: only what they say of her (the job) tells them apart.
    const others = Array.from({ length: 150 }, (_, at) => ({
      title: `Priya fact ${at}`,
      body: [
        `Priya visited the ${at}th street market with her cousin.`,
        `Priya keeps ${at} succulents on the balcony.`,
        `Priya likes the number ${at}.`,
      ][at % 3] as string,
      observed: '2026-05-01',
      updated: `2026-05-${String((at % 20) + 10)}`,
    }));
    const facts = memory(
      { title: "Priya's job", body: "Priya works as a nurse at St Mary's.", updated: '2026-01-01' },
      ...others,
    );
    const analyst = extractedFact({
      title: 'Priya at Monzo',
      body: 'She left the hospital; Priya is a data analyst at Monzo now.',
      observed: '2026-06-01',
    });
    expect(neighbourTitles(analyst, facts)).toEqual(["Priya's job"]);
    // And a fact of hers that says nothing the others say of her asks for no check at all.
    const cake = extractedFact({ title: 'Priya bakes', body: 'Priya bakes lemon cake on Sundays.' });
    expect(itemsOf([cake], rankedMemoryList(facts, NOW))).toEqual([]);
  });

  it('lists the latest older facts of a name said of many times, none newer, however many there are', () => {
    // A run that reads out where each of 300 things of Priya's lives, one day each: every fact names her and says
    // where, so each is alike to all the others. The fact of day 200 is shown the days just before it.
    const day = (at: number) => new Date(Date.UTC(2026, 0, 1 + at)).toISOString().slice(0, 10);
    const facts = Array.from({ length: 300 }, (_, at) =>
      extractedFact({
        title: `Priya's home ${at}`,
        body: `Priya lives in flat ${at} on Rua ${at}.`,
        observed: day(at),
      }),
    );
    const [later, ...earlier] = [facts[200]!, ...facts.slice(0, 200), ...facts.slice(201)];
    const items = itemsOf([later, ...earlier], []);
    const shown = items.find((item) => item.position === 0)!.neighbours.map((n) => Number(n.id.slice(4)) - 1);
    // Positions in the list given: 1 is day 0 … 200 is day 199, 201 is day 201 ….
    expect(shown).toEqual([200, 199, 198, 197, 196, 195, 194, 193]);
  });

  it('lists a state before the events of a day when the update, a state, shares only a name with them', () => {
    // An update told in Spanish where the person's facts are in English: all of them are in another language;
    // of those, where she lives is a state as the update is, her outings are events on a day.
    const outings = Array.from({ length: 10 }, (_, at) => ({
      title: `Ines's outing ${at}`,
      body: `Ines went to museum number ${at} on 2026-02-${String(at + 10)}.`,
      observed: `2026-02-${String(at + 10)}`,
      updated: `2026-02-${String(at + 10)}`,
    }));
    const facts = memory(
      { title: 'Ines lives in Alfama, Lisbon.', body: 'Ines lives in Alfama, Lisbon.' },
      ...outings,
    );
    const paris = extractedFact({
      title: 'Ines vive en Le Marais, Paris.',
      body: 'Ines vive en Le Marais, Paris.',
      observed: '2026-03-01',
    });
    expect(neighbourTitles(paris, facts)?.[0]).toBe('Ines lives in Alfama, Lisbon.');
  });
});

describe('checkUpdates', () => {
  const facts = memory({ title: 'Home address', body: 'Lives in Lisbon, Rua das Flores 28.' });
  const index = rankedMemoryList(facts, NOW);

  function model(answer: (prompt: string) => unknown): { provider: ModelProvider; prompts: string[] } {
    const prompts: string[] = [];
    const provider = {
      label: 'test',
      generateObject: async (request: { prompt: string; schema: { parse(value: unknown): unknown } }) => {
        prompts.push(request.prompt);
        return {
          value: request.schema.parse(answer(request.prompt)),
          usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
          attempts: 1,
        };
      },
    } as unknown as ModelProvider;
    return { provider, prompts };
  }

  /** The check of Porto's address over memory's Lisbon one, with its call answered by `provider`. */
  const checkPorto = (provider: ModelProvider, maxCalls = 5) =>
    checkUpdates(prepareUpdateCheck([porto], { index, runId: (at) => `run-${at + 1}`, shown: [new Set()] }), {
      model: () => provider,
      maxCalls,
      maxOutputTokens: 1000,
    });

  it('adds the ids the model names, only among the new fact’s own related facts', async () => {
    const { provider } = model(() => ({
      updates: [
        { fact: 'new-1', replaces: [facts[0]!.id, 'f-not-listed'] },
        { fact: 'new-9', replaces: ['x'] },
      ],
    }));
    const result = await checkPorto(provider);
    expect(result.candidates[0]!.replaces).toEqual([facts[0]!.id]);
    expect(result).toMatchObject({ calls: 1, checked: 1, found: 1 });
  });

  it('keeps the facts as extracted, with a note, when the call fails or the call budget is spent', async () => {
    const { provider } = model(() => ({ nonsense: true }));
    const failed = await checkPorto(provider);
    expect(failed.candidates).toEqual([porto]);
    expect(failed.notes.join('\n')).toMatch(/the update check of 1 new fact\(s\) failed/);
    const spent = await checkPorto(provider, 0);
    expect(spent.calls).toBe(0);
    expect(spent.notes.join('\n')).toMatch(/left out: the run made its limits.maxCallsPerRun calls/);
  });
});

const fake = useFakeAnthropic();

function writeSession(dir: string, id: string, day: string, lines: readonly string[]): void {
  const file = join(dir, `${id}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      id,
      startedAt: `${day}T10:00:00Z`,
      endedAt: `${day}T10:30:00Z`,
      messages: lines.map((content) => ({ role: 'user', content })),
    }),
  );
  const old = new Date(Date.parse(`${day}T12:00:00Z`));
  utimesSync(file, old, old);
}

/** The home address learned long ago, 200 build tools learned after it, and the move north that replaces it. */
const ADDRESSES: ScriptedFact[] = [
  {
    trigger: 'I live in Lisbon',
    type: 'user',
    title: 'Home address',
    body: 'Lives in Lisbon, Rua das Flores 28.',
  },
  ...Array.from({ length: 200 }, (_, at) => ({
    trigger: `tool number ${at} `,
    type: 'project' as const,
    title: `Build tool ${at}`,
    body: `The project builds part ${at} with tool number ${at}.`,
  })),
  {
    trigger: 'we moved north',
    type: 'user',
    title: 'Home address',
    body: 'Lives in Porto.',
    replacesTitle: 'Home address',
  },
];

/**
 * A run over the Lisbon address (learned long before the 200 tools after it: the oldest fact of memory) and the
 * tools, then a run over the session that moves the user north, both with `config` over the test space's.
 * The fake server answers as its test set it to. Returns both summaries, the second run's requests, the
 * home addresses of memory, active and archived, as [body, status] sorted, and how many times the second run
 * rendered the memory files.
 */
async function moveNorth(config: (config: Config) => Config = (same) => same) {
  const test = createTestSpace({ modelUrl: fake.url });
  const sessions = test.space.sessionsDir;
  writeSession(sessions, 's-home', '2025-06-01', ['I live in Lisbon, Rua das Flores 28.']);
  writeSession(
    sessions,
    's-tools',
    '2026-10-02',
    ADDRESSES.slice(1, -1).map((_, at) => `We use tool number ${at} for part ${at}.`),
  );
  const consolidate = fastConsolidator(config(test.config), { now: () => NOW });
  const first = await consolidate(test.space, FORCED_RUN);
  writeSession(sessions, 's-moved', '2026-11-20', ['Big news: we moved north to Porto last week.']);
  const before = fake.server.requests.length;
  const rendersBefore = renders();
  const summary = await consolidate(test.space, FORCED_RUN);
  const rendered = renders() - rendersBefore;
  const loaded = await loadMemory(test.space.memoryDir);
  const homes = [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)]
    .filter((fact) => fact.title === 'Home address')
    .map((fact) => [fact.body, fact.status])
    .sort();
  return { test, first, summary, requests: fake.server.requests.slice(before), homes, rendered };
}

const MOVED = [
  ['Lives in Lisbon, Rua das Flores 28.', 'superseded'],
  ['Lives in Porto.', 'active'],
];

describe('an update whose older fact is far back in a large memory', () => {
  it('supersedes the fact learned 200 facts earlier, which the extraction call did not show', async () => {
    fake.server.setDefault(scriptedExtractor(ADDRESSES));
    const { first, summary, requests, homes } = await moveNorth();
    expect(first.added).toBe(201);
    const extraction = requests.find((request) => !isUpdateCheckRequest(request))!;
    // The extraction call's memory list did not show the old address: the check did.
    expect(extraction.prompt).not.toContain('Rua das Flores');
    expect(requests.filter((request) => isUpdateCheckRequest(request))).toHaveLength(1);
    expect(summary.superseded).toBe(1);
    expect(homes).toEqual(MOVED);
  });
});

describe("the update check carried by the run's curation call", () => {
  /** The move north, its run curating user facts (budget of one), the curation call answering or failing. */
  function moveNorthCurated(curationReply: 'answer' | 'fail') {
    const curated = withCurator(scriptedExtractor(ADDRESSES), () => ({ results: [] }));
    fake.server.setDefault((request) =>
      isCurationRequest(request) && curationReply === 'fail' && request.prompt.includes('## New facts')
        ? faults.badRequest('curation is down')
        : curated(request),
    );
    return moveNorth((config) => ({ ...config, curation: { ...DEFAULT_CURATION, maxFactsPerType: 1 } }));
  }

  it('asks the check inside the curation call, so the run makes no call of its own for it', async () => {
    const { test, summary, requests, homes } = await moveNorthCurated('answer');
    expect(requests.filter(isUpdateCheckRequest)).toHaveLength(0);
    const carrying = requests.filter((request) => isCurationRequest(request));
    expect(carrying).toHaveLength(1);
    expect(carrying[0]!.system).toContain('A second task, on its own: keep memory up to date.');
    expect(checkInPrompt(carrying[0]!.prompt).map((fact) => fact.body)).toEqual(['Lives in Porto.']);
    expect(carrying[0]!.prompt).toContain('Rua das Flores');
    expect(summary.callKinds).toEqual({
      extraction: 1,
      updateCheck: 0,
      curation: 1,
      updateCheckCarried: 1,
    });
    expect(summary.calls).toBe(2);
    expect(summary.superseded).toBe(1);
    expect(homes).toEqual(MOVED);
    // `history show` says which curation call carried the check.
    const shown = await cliAt(test.root, fake.url, ['history', 'show', summary.runId]);
    expect(shown.stdout).toContain(
      '  calls      1 extraction, 0 update check, 1 curation (1 carrying the update check)',
    );
  });

  it('plans the write once: the files are rendered once, after curation and the check answered', async () => {
    const { summary, homes, rendered } = await moveNorthCurated('answer');
    expect(summary.callKinds).toMatchObject({ curation: 1, updateCheckCarried: 1 });
    expect(homes).toEqual(MOVED);
    // The draft curation looked at rendered nothing; the plan, with the old address moved to the archive,
    // rendered the files once (a plan before curation and one after it rendered them three times).
    expect(rendered).toBe(1);
  });

  it('asks the check alone when the curation call that carried it failed, and still supersedes', async () => {
    const { summary, requests, homes } = await moveNorthCurated('fail');
    expect(requests.filter(isUpdateCheckRequest)).toHaveLength(1);
    expect((summary.notes ?? []).join('\n')).toMatch(/curation of user facts failed \(.*curation is down/);
    expect((summary.notes ?? []).join('\n')).not.toMatch(/update check of .* failed/);
    expect(summary.callKinds).toMatchObject({ extraction: 1, updateCheck: 1, curation: 1 });
    expect(homes).toEqual(MOVED);
  });
});
