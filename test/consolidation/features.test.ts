import { describe, expect, it } from 'vitest';
import { FactLookup } from '../../src/consolidation/reconcile/fact-lookup.js';
import { featuresOf, forgetFeatures, sameNamesAndNumbers } from '../../src/consolidation/facts/features.js';
import { bodyKey, sequenceSimilarity } from '../../src/consolidation/facts/similarity.js';
import type { Fact } from '../../src/memory/types.js';
import { fact as memoryFact } from '../memory/helpers.js';

function text(title: string, body: string) {
  return { title, body, why: undefined, howToApply: undefined };
}

function fact(id: string, title: string, body: string, type: Fact['type'] = 'user'): Fact {
  return memoryFact({ id, title, body, observed: '2026-11-01', updated: '2026-11-01' }, type);
}

describe('same names and numbers', () => {
  it('tells two people, two places, two numbers and two links apart', () => {
    const same = (a: string, b: string) => sameNamesAndNumbers(text('Fact', a), text('Fact', b));
    expect(same('Melanie lost her job.', 'Caroline lost her job.')).toBe(false);
    expect(same('Lives in Lisbon.', 'Lives in Porto.')).toBe(false);
    expect(same('Standup at 9:30.', 'Standup at 10:30.')).toBe(false);
    expect(same('Board at https://a.example/d/1', 'Board at https://b.example/d/1')).toBe(false);
    expect(same('Uses AWS for hosting.', 'Uses GCP for hosting.')).toBe(false);
  });

  it('reads a capitalised word the other fact writes in lower case as an ordinary word', () => {
    const same = (a: string, b: string) => sameNamesAndNumbers(text('Fact', a), text('Fact', b));
    expect(same('Usually orders a flat white.', 'Orders a flat white usually.')).toBe(true);
    expect(same('The user orders oat milk.', 'User orders oat milk.')).toBe(true);
    expect(same('Melanie lost her job in May.', 'In May, Melanie lost her job.')).toBe(true);
  });
});

describe('features', () => {
  it('computes the same features again after the cache by text is emptied', () => {
    const before = featuresOf(text('Coffee order', 'Orders a flat white.'));
    forgetFeatures();
    expect(featuresOf(text('Coffee order', 'Orders a flat white.'))).toEqual(before);
    expect(before.key).toBe(bodyKey('Orders a flat white.'));
    expect(before.titleWords).toEqual(['coffee', 'order']);
  });

  it('scores word sequences in order', () => {
    expect(sequenceSimilarity(['home', 'address'], ['home', 'address'])).toBe(1);
    expect(sequenceSimilarity(['home', 'address'], ['address', 'home'])).toBe(0.5);
    expect(sequenceSimilarity([], ['a'])).toBe(0);
  });
});

describe('fact index', () => {
  it('finds facts by the words candidates look up, and forgets versions that changed', () => {
    const facts = new Map<string, Fact>();
    const index = new FactLookup((id) => facts.get(id), {
      words: new Set(['pottery', 'class', 'melanie']),
      keys: new Set([bodyKey('Melanie takes a pottery class.')]),
    });
    const pottery = fact('f-1', 'Pottery class', 'Melanie takes a pottery class.');
    const other = fact('f-2', 'Guitar', 'Plays the guitar.');
    for (const item of [pottery, other]) {
      facts.set(item.id, item);
      index.add(item);
    }
    expect(index.exact(bodyKey('Melanie takes a pottery class!'))).toEqual([pottery]);
    const noNumbers = featuresOf(pottery).numbersKey;
    expect([...index.mayShare('user', noNumbers, 'words', ['pottery', 'class', 'melanie'], 0.5)]).toEqual([
      pottery,
    ]);
    expect([...index.mayShare('project', noNumbers, 'words', ['pottery'], 0.5)]).toEqual([]);
    // A fact naming other numbers is never read: no pure-code rule joins facts whose numbers differ.
    const numbered = featuresOf(fact('f-9', 'Pottery class 2', 'Melanie takes pottery class 2.')).numbersKey;
    expect([...index.mayShare('user', numbered, 'words', ['pottery', 'class', 'melanie'], 0.5)]).toEqual([]);
    const superseded = { ...pottery, status: 'superseded' as const, supersededBy: 'f-3' };
    facts.set(pottery.id, superseded);
    index.add(superseded);
    expect(index.exact(bodyKey('Melanie takes a pottery class.'))).toEqual([]);
    expect(index.supersededBy('f-3')).toEqual([superseded]);
  });
});
