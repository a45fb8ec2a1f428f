import { describe, expect, it } from 'vitest';
import {
  createIsRejected,
  factFingerprint,
  fingerprintSimilarity,
} from '../../src/consolidation/approval/rejected-match.js';
import { textSimilarity } from '../../src/consolidation/facts/similarity.js';
import { normalizedTextHash } from '../../src/memory/index.js';
import type { RejectedList } from '../../src/space/index.js';

const COFFEE = { title: 'Coffee order', body: 'User orders a flat white with oat milk.' };
/** The same fact in other words: at or above the near-duplicate threshold (0.6). */
const COFFEE_REWORDED = {
  title: 'Coffee order',
  body: "User's usual coffee order is a flat white with oat milk.",
};
const COFFEE_REWORDED_TITLE = {
  title: 'Usual coffee',
  body: "User's usual coffee order is a flat white with oat milk.",
};

/** A rejected list of one fact from session `s1`, with or without its fingerprint. */
function rejectedList(fact: { title: string; body: string }, withFingerprint = true): RejectedList {
  return {
    version: 1,
    facts: [
      {
        id: 'f1',
        title: fact.title,
        textHash: normalizedTextHash(fact.body),
        sessions: ['s1'],
        ...(withFingerprint ? { fingerprint: factFingerprint(fact) } : {}),
        runId: 'run-1',
        rejectedOn: '2026-12-01',
      },
    ],
  };
}

describe('factFingerprint', () => {
  it('keeps no word of the fact, and is the same whatever the case, accents and punctuation', () => {
    const fingerprint = factFingerprint(COFFEE);
    expect(fingerprint.join(' ')).not.toMatch(/coffee|flat|white|oat|milk/);
    expect(
      factFingerprint({ title: 'COFFEE ORDER', body: 'user orders a flat-white, with oat milk' }),
    ).toEqual(fingerprint);
  });

  it('scores two facts as textSimilarity scores their titles and bodies', () => {
    for (const other of [
      COFFEE_REWORDED,
      COFFEE_REWORDED_TITLE,
      { title: 'Home', body: 'Lives in Porto.' },
    ]) {
      expect(fingerprintSimilarity(factFingerprint(COFFEE), factFingerprint(other))).toBeCloseTo(
        textSimilarity([COFFEE.title, COFFEE.body], [other.title, other.body]),
        10,
      );
    }
  });
});

describe('createIsRejected', () => {
  const from = (fact: { title: string; body: string }, source: string) => ({ ...fact, sources: [source] });

  it('knows a rejected fact said in other words, from a session it was rejected from', () => {
    const isRejected = createIsRejected(rejectedList(COFFEE));
    expect(isRejected(from(COFFEE, 's1'))).toBe(true);
    expect(isRejected(from(COFFEE_REWORDED_TITLE, 's1'))).toBe(true);
    // A new session is new evidence: proposed again, in any words.
    expect(isRejected(from(COFFEE_REWORDED_TITLE, 's2'))).toBe(false);
    expect(isRejected(from(COFFEE, 's2'))).toBe(false);
  });

  it('lets another fact of the same session through', () => {
    const isRejected = createIsRejected(rejectedList(COFFEE));
    expect(
      isRejected(from({ title: 'Home address', body: 'Lives in Lisbon, Rua das Flores 28.' }, 's1')),
    ).toBe(false);
    expect(isRejected(from({ title: 'Tea', body: 'User drinks green tea in the afternoon.' }, 's1'))).toBe(
      false,
    );
  });

  it('matches an entry written before fingerprints by its title or text only', () => {
    const isRejected = createIsRejected(rejectedList(COFFEE, false));
    expect(isRejected(from(COFFEE_REWORDED, 's1'))).toBe(true);
    expect(isRejected(from({ title: 'x', body: COFFEE.body }, 's1'))).toBe(true);
    expect(isRejected(from(COFFEE_REWORDED_TITLE, 's1'))).toBe(false);
  });
});
