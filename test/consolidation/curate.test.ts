import { describe, expect, it } from 'vitest';
import { CurationConfig } from '../../src/config/schema.js';
import {
  applyCuration,
  checkCuration,
  curationGroups,
  curationPrompt,
  namesIn,
  type CurationAnswer,
  type CurationGroup,
} from '../../src/consolidation/curation/curate.js';
import { createRunIds } from '../../src/consolidation/facts/fact-ids.js';
import type { Fact } from '../../src/memory/types.js';
import { fact } from '../memory/helpers.js';

const coffee = fact({
  id: 'f-aaaaaaaaa1',
  title: 'Coffee order',
  body: 'Drinks an oat flat white.',
  observed: '2026-10-01',
  updated: '2026-10-01',
  sources: ['s-1'],
});
const coffeePlace = fact({
  id: 'f-aaaaaaaaa2',
  title: 'Coffee place',
  body: 'Gets the oat flat white at Fábrica.',
  observed: '2026-10-03',
  updated: '2026-10-03',
  sources: ['s-2'],
});
const climbing = fact({
  id: 'f-aaaaaaaaa3',
  title: 'Hobby',
  body: 'Goes bouldering every week.',
  sources: ['s-3'],
});
const pottery = fact({
  id: 'f-aaaaaaaaa4',
  title: 'New hobby',
  body: 'Took up pottery classes in November.',
  sources: ['s-4'],
});
const alice = fact({ id: 'f-aaaaaaaaa5', title: 'Birthday', body: 'The birthday of Alice is on 3 May.' });
const bob = fact({ id: 'f-aaaaaaaaa6', title: 'Birthday', body: 'The birthday of Bob is on 3 May.' });
const berlin = fact({
  id: 'f-aaaaaaaaa7',
  title: 'Home',
  body: 'Lives in Berlin.',
  observed: '2025-01-01',
  updated: '2025-01-01',
});
const lisbon = fact({
  id: 'f-aaaaaaaaa8',
  title: 'Home',
  body: 'Lives in Lisbon.',
  observed: '2026-06-01',
  updated: '2026-06-01',
});
const person: Fact = {
  ...fact({ id: 'f-aaaaaaaaa9', title: 'Coffee', body: 'Oat flat white, always.' }),
  owner: 'other',
  file: 'notes.md',
};
const handEdited: Fact = fact({
  id: 'f-aaaaaaaab1',
  title: 'Coffee by hand',
  body: 'Drinks oat flat white.',
  editedByHand: true,
});

const jonas = fact({ id: 'f-aaaaaaaad1', title: 'Saxophone', body: 'Jonas takes saxophone lessons.' });
const kaito = fact({ id: 'f-aaaaaaaad2', title: 'Saxophone', body: 'Kaito takes saxophone lessons.' });
const jonasCousin = fact({
  id: 'f-aaaaaaaad3',
  title: 'Cousin',
  body: "Jonas's cousin Bia lives near Kaito.",
});
const kaitosCousin = fact({
  id: 'f-aaaaaaaae1',
  title: 'Cousin',
  body: "Kaito's cousin Bia lives in Lisbon.",
  updated: '2026-01-01',
});
const teo = fact({
  id: 'f-aaaaaaaae2',
  title: 'Brother job',
  body: "Jonas's brother Teo works in Paris.",
  updated: '2026-02-01',
});

function group(facts: readonly Fact[], people: readonly Fact[] = []): CurationGroup {
  return { type: 'user', why: ['duplicates'], facts, people };
}

function answer(
  results: Partial<CurationAnswer['results'][number]>[],
  review: CurationAnswer['review'] = [],
) {
  return {
    results: results.map((result) => ({
      title: 'Merged',
      body: 'Merged body.',
      why: null,
      howToApply: null,
      replaces: [],
      outdated: [],
      ...result,
    })),
    review,
  };
}

/** The reason code gives for refusing the one result of an answer; none of the answer is accepted. */
function refusal(
  checked: CurationGroup,
  result: Partial<CurationAnswer['results'][number]>,
): string | undefined {
  const check = checkCuration(checked, answer([result]));
  expect(check.accepted).toEqual([]);
  expect(check.refused).toEqual([{ title: result.title ?? 'Merged', reason: expect.any(String) }]);
  return check.refused[0]?.reason;
}

/** The check of a merge of the coffee order and its place that keeps every detail of both. */
function checkCoffeeMerge() {
  return checkCuration(
    group([coffee, coffeePlace]),
    answer([
      {
        title: 'Coffee order',
        body: 'Drinks an oat flat white, and gets it at Fábrica.',
        replaces: [coffee.id, coffeePlace.id],
      },
    ]),
  );
}

/** applyCuration's day, and the id it gives the merged fact. */
const APPLY_AS_MERGED = { today: '2026-12-01', newId: () => 'f-bbbbbbbbb1' };

describe('checkCuration', () => {
  it('accepts a merge that keeps every detail of the facts it replaces', () => {
    const check = checkCoffeeMerge();
    expect(check.refused).toEqual([]);
    expect(check.accepted).toHaveLength(1);
    expect(check.accepted[0]?.replaces.map((f) => f.id)).toEqual([coffee.id, coffeePlace.id]);
  });

  // Each result replaces the facts of `replaces`, in a group that shows `shown` beside them.
  it.each<{
    refused: string;
    replaces: Fact[];
    shown?: Fact[];
    title: string;
    body: string;
    outdated?: Fact[];
    reason: RegExp;
  }>([
    {
      refused: 'a merge that drops a detail the successor does not keep (a new hobby)',
      replaces: [climbing, pottery],
      title: 'Hobbies',
      body: 'Goes bouldering every week.',
      reason: /drops a fact: f-aaaaaaaaa4 \("New hobby"\) loses .*"pottery"/,
    },
    {
      refused: 'a merge that drops a name, even when most words are kept',
      replaces: [coffee, coffeePlace],
      title: 'Coffee place',
      body: 'Drinks an oat flat white at the place.',
      reason: /loses fábrica/,
    },
    {
      refused: 'a merge of two people',
      replaces: [alice, bob],
      title: 'Birthdays',
      body: 'The birthday of Alice and of Bob is on 3 May.',
      reason: /merges facts about different subjects \(f-aaaaaaaaa5 and f-aaaaaaaaa6\)/,
    },
    {
      refused: 'a merge of two people named first in their sentences, once memory shows they are names',
      replaces: [jonas, kaito],
      shown: [jonasCousin],
      title: 'Saxophone',
      body: 'Jonas and Kaito take saxophone lessons.',
      reason: /merges facts about different subjects/,
    },
    {
      refused: 'a result that adds a name or a number none of its facts holds',
      replaces: [coffee, coffeePlace],
      title: 'Coffee order',
      body: 'Drinks an oat flat white at Fábrica, 2 a day, with Carla.',
      reason: /adds names, numbers or links .*carla.*2|adds names, numbers or links .*2.*carla/,
    },
    {
      refused: 'an outdated fact with no newer fact kept beside it (a fact lost)',
      replaces: [berlin, lisbon],
      title: 'Home',
      body: 'Lives in Berlin.',
      outdated: [lisbon],
      reason: /f-aaaaaaaaa8 is called outdated but no newer fact of the same subject/,
    },
    {
      refused: 'an outdated fact whose newer fact is about another subject',
      replaces: [kaitosCousin, teo],
      title: 'Brother job',
      body: "Jonas's brother Teo works in Paris.",
      outdated: [kaitosCousin],
      reason: /no newer fact of the same subject/,
    },
  ])('refuses $refused', ({ replaces, shown = [], title, body, outdated = [], reason }) => {
    const ids = (facts: readonly Fact[]) => facts.map((item) => item.id);
    const result = { title, body, replaces: ids(replaces), outdated: ids(outdated) };
    expect(refusal(group([...replaces, ...shown]), result)).toEqual(expect.stringMatching(reason));
  });

  it.each([
    { whose: 'a person’s fact (a file dreamd did not write)', theirs: person },
    { whose: 'an entry edited by hand', theirs: handEdited },
  ])('refuses a result that rewrites $whose, and lists it for review instead', ({ theirs }) => {
    const check = checkCuration(
      group([coffee], [theirs]),
      answer([
        {
          title: 'Coffee order',
          body: 'Drinks an oat flat white, always.',
          replaces: [coffee.id, theirs.id],
        },
      ]),
    );
    expect(check.accepted).toEqual([]);
    expect(check.refused[0]?.reason).toEqual(
      expect.stringMatching(new RegExp(`rewrites a person's fact \\(${theirs.id}\\)`)),
    );
    expect(check.review.map((entry) => entry.fact.id)).toEqual([theirs.id]);
  });

  it('keeps the newest value of what changed: an older fact declared outdated may lose its detail', () => {
    const check = checkCuration(
      group([berlin, lisbon]),
      answer([
        { title: 'Home', body: 'Lives in Lisbon.', replaces: [berlin.id, lisbon.id], outdated: [berlin.id] },
      ]),
    );
    expect(check.refused).toEqual([]);
    expect(check.accepted).toHaveLength(1);
  });

  it('refuses unknown ids, empty replaces and a fact replaced twice', () => {
    const check = checkCuration(
      group([coffee, coffeePlace]),
      answer([
        { title: 'A', body: 'Drinks an oat flat white.', replaces: ['f-zzzzzzzzzz'] },
        { title: 'B', body: 'Drinks an oat flat white.', replaces: [] },
        { title: 'Coffee order', body: 'Drinks an oat flat white.', replaces: [coffee.id] },
        { title: 'Coffee order', body: 'Drinks an oat flat white.', replaces: [coffee.id] },
      ]),
    );
    expect(check.accepted).toHaveLength(1);
    expect(check.refused.map((entry) => entry.reason)).toEqual([
      expect.stringMatching(/not in the set \(f-zzzzzzzzzz\)/),
      'it replaces no fact',
      expect.stringMatching(/another result already replaces/),
    ]);
  });

  it('lists people’s facts the model flags for review, and ignores flags on unknown ids', () => {
    const check = checkCuration(
      group([coffee], [person]),
      answer(
        [],
        [
          { id: person.id, reason: 'repeats f-aaaaaaaaa1' },
          { id: 'f-zzzzzzzzzz', reason: 'x' },
        ],
      ),
    );
    expect(check.review).toEqual([{ fact: person, reason: 'repeats f-aaaaaaaaa1' }]);
  });
});

describe('namesIn', () => {
  it('reads capitalised words that do not open a sentence', () => {
    expect([
      ...namesIn({
        title: 'New hobby',
        body: 'Took up pottery with Anna. She likes Kyoto.',
        why: undefined,
        howToApply: undefined,
      }),
    ]).toEqual(['anna', 'kyoto']);
  });
});

describe('curationGroups', () => {
  const config = CurationConfig.parse({ maxFactsPerType: 3, maxBytesPerType: 10_000 });
  // The coffee order said twice more in other words.
  const again = fact({ id: 'f-aaaaaaaac1', title: 'Coffee', body: 'Orders an oat flat white.' });
  const third = fact({ id: 'f-aaaaaaaac2', title: 'Usual coffee', body: 'Usual drink: oat flat white.' });
  it('makes no group under budget without near-duplicates', () => {
    expect(curationGroups([coffee, climbing, alice], config)).toEqual([]);
  });
  it('picks a type over its fact budget, with people’s facts shown apart', () => {
    const groups = curationGroups([coffee, coffeePlace, climbing, pottery, person], config);
    expect(groups).toEqual([
      {
        type: 'user',
        why: ['facts'],
        facts: expect.arrayContaining([coffee, coffeePlace, climbing, pottery]),
        people: [person],
        known: expect.any(Set),
      },
    ]);
    expect(curationPrompt(groups[0] as CurationGroup)).toContain(`id: ${person.id} (READ-ONLY)`);
  });
  it('picks a type over its byte budget', () => {
    const groups = curationGroups([coffee, climbing], CurationConfig.parse({ maxBytesPerType: 20 }));
    expect(groups.map((g) => g.why)).toEqual([['bytes']]);
  });
  it('picks a type whose facts say the same thing in other words', () => {
    const groups = curationGroups([coffee, again, third, climbing], CurationConfig.parse({}));
    expect(groups.map((g) => g.why)).toEqual([['duplicates']]);
  });
  it('with the run’s fresh facts given, looks only at types that hold one, and at pairs with one', () => {
    const all = [coffee, again, third, climbing];
    expect(curationGroups(all, CurationConfig.parse({}), new Set([climbing.id]))).toEqual([]);
    expect(curationGroups(all, CurationConfig.parse({}), new Set([third.id])).map((g) => g.why)).toEqual([
      ['duplicates'],
    ]);
    const over = CurationConfig.parse({ maxFactsPerType: 3 });
    expect(curationGroups(all, over, new Set())).toEqual([]);
    expect(curationGroups(all, over, new Set([climbing.id])).map((g) => g.why)).toEqual([['facts']]);
  });

  it('never curates when disabled', () => {
    expect(curationGroups([coffee, coffeePlace, climbing, pottery], { ...config, enabled: false })).toEqual(
      [],
    );
  });
});

describe('applyCuration', () => {
  it('adds the merged fact and supersedes what it replaces, with sources and dates kept', () => {
    const check = checkCoffeeMerge();
    const { facts, merged } = applyCuration([coffee, coffeePlace, climbing], check.accepted, APPLY_AS_MERGED);
    expect(facts.find((f) => f.id === 'f-bbbbbbbbb1')).toMatchObject({
      status: 'active',
      sources: ['s-1', 's-2'],
      observed: '2026-10-01',
      updated: '2026-10-03',
    });
    expect(merged.map((m) => [m.fact.id, m.fact.status, m.fact.supersededBy])).toEqual([
      [coffee.id, 'superseded', 'f-bbbbbbbbb1'],
      [coffeePlace.id, 'superseded', 'f-bbbbbbbbb1'],
    ]);
    expect(facts.find((f) => f.id === climbing.id)).toBe(climbing);
  });
  it('does not apply a result whose facts changed since the call, and says which and why', () => {
    const check = checkCoffeeMerge();
    const edited = { ...coffee, body: 'Drinks black coffee now.', editedByHand: true };
    const { facts, merged, unapplied } = applyCuration(
      [edited, coffeePlace],
      check.accepted,
      APPLY_AS_MERGED,
    );
    expect(merged).toEqual([]);
    expect(facts).toEqual([edited, coffeePlace]);
    expect(unapplied).toEqual([
      {
        result: check.accepted[0],
        reason: expect.stringMatching(
          new RegExp(
            `^its facts changed before it could be applied \\(fact ${coffee.id} .*edited by a person`,
          ),
        ),
      },
    ]);
  });

  it.each([
    ['gone', (facts: Fact[]) => facts.filter((f) => f.id !== coffee.id), /is no longer in memory/],
    [
      'superseded',
      (facts: Fact[]) =>
        facts.map((f) =>
          f.id === coffee.id ? { ...f, status: 'superseded' as const, supersededBy: 'f-ccccccccc1' } : f,
        ),
      /was superseded by f-ccccccccc1 since curation read it/,
    ],
    [
      'reworded',
      (facts: Fact[]) => facts.map((f) => (f.id === coffee.id ? { ...f, body: 'Drinks black coffee.' } : f)),
      /changed since curation read it/,
    ],
  ])('refuses with a reason a result one of whose facts is %s', (_how, change, reason) => {
    const check = checkCoffeeMerge();
    const { merged, unapplied } = applyCuration(
      change([coffee, coffeePlace]),
      check.accepted,
      APPLY_AS_MERGED,
    );
    expect(merged).toEqual([]);
    expect(unapplied.map((entry) => entry.reason)).toEqual([expect.stringMatching(reason)]);
  });

  it('gives the merged fact the id of its result: the same result, the same id in every plan', () => {
    const check = checkCoffeeMerge();
    let drawn = 0;
    const ids = createRunIds(() => `f-ddddddddd${(drawn += 1)}`);
    const first = applyCuration([coffee, coffeePlace], check.accepted, { today: '2026-12-01', newId: ids });
    const again = applyCuration([coffee, coffeePlace], check.accepted, { today: '2026-12-01', newId: ids });
    expect(first.merged.map((m) => m.by.id)).toEqual(['f-ddddddddd1', 'f-ddddddddd1']);
    expect(again.merged.map((m) => m.by.id)).toEqual(first.merged.map((m) => m.by.id));
  });
});
