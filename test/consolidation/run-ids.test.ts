/**
 * A run's fact ids: a run plans its write more than once (after a hand edit, after curation), and a fact it
 * learns keeps one id through every plan, or curation's results would name facts the next plan does not have.
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/consolidation/reconcile/reconcile.js';
import { createRunIds } from '../../src/consolidation/facts/fact-ids.js';
import type { Fact } from '../../src/memory/types.js';
import { extractedFact, fact } from '../memory/helpers.js';

const TODAY = '2026-11-30';

/** Ids in the order they are drawn, predictable. */
function counter(): () => string {
  let next = 0;
  return () => `f-run${String((next += 1)).padStart(7, '0')}`;
}

const bun = extractedFact({ title: 'Runtime', body: 'The project runs on Bun 1.2.', type: 'project' });
const tabs = extractedFact({
  title: 'Indentation',
  body: 'Indent with tabs, never spaces.',
  type: 'feedback',
});
const dog = extractedFact({ title: 'Dog', body: 'Ana has a dog named Rex.', type: 'user' });

function plan(existing: readonly Fact[], candidates: (typeof bun)[], newId: (key: string) => string) {
  return reconcile({
    existing,
    candidates,
    today: TODAY,
    newId,
    isForgotten: () => false,
    containsSecret: () => false,
  });
}

const idsByTitle = (facts: readonly Fact[]) =>
  Object.fromEntries(facts.filter((f) => f.status === 'active').map((f) => [f.title, f.id]));

describe('createRunIds', () => {
  it('gives the same key the same id and a new key a fresh one', () => {
    const ids = createRunIds(counter());
    expect([ids('a'), ids('b'), ids('a')]).toEqual(['f-run0000001', 'f-run0000002', 'f-run0000001']);
  });

  it('gives a candidate the same id in every plan of a run, whatever memory and order it meets', () => {
    const ids = createRunIds(counter());
    const first = plan([], [bun, tabs, dog], ids);
    // Re-planned on memory a person edited meanwhile, the candidates in another order.
    const edited = [fact({ id: 'f-hand000001', title: 'Editor', body: 'Uses Helix.', editedByHand: true })];
    const second = plan(edited, [dog, tabs, bun], ids);
    expect(idsByTitle(second.facts)).toEqual({ ...idsByTitle(first.facts), Editor: 'f-hand000001' });
  });

  it('draws another id for a key whose id is already in use', () => {
    const ids = createRunIds(counter());
    ids('something else');
    // The next fresh id, f-run0000002, is already a fact in memory.
    const clash = fact({ id: 'f-run0000002', title: 'Old', body: 'Something else.' });
    const added = plan([clash], [bun], ids).added;
    expect(added.map((f) => f.id)).toEqual(['f-run0000003']);
  });
});
