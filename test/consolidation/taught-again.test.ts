/**
 * Reconcile counts a rule taught again: a session that started after the fact was saved says it again, in the
 * same words or others. Pure: the test of "after it was saved" is passed in.
 */
import { describe, expect, it } from 'vitest';
import type { ReconcileInput } from '../../src/consolidation/reconcile/reconcile.js';
import { createTaughtAfterSaved } from '../../src/consolidation/write/taught-after-saved.js';
import { absorbRepeats } from '../../src/consolidation/curation/curate.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import type { Fact } from '../../src/memory/types.js';
import { extractedFact, fact, reconcileQuietly } from '../memory/helpers.js';

const RULE = fact(
  {
    id: 'f-pnpm000000',
    title: 'Package manager',
    body: 'Use pnpm to install dependencies.',
    sources: ['s-1'],
    observed: '2026-11-01',
    updated: '2026-11-01',
  },
  'feedback',
);

function said(session: string, observed: string, body: string, title = 'Package manager'): ExtractedFact {
  return extractedFact({ type: 'feedback', title, body, observed, sources: [session] });
}

function run(
  existing: readonly Fact[],
  candidates: readonly ExtractedFact[],
  options: Partial<ReconcileInput> = {},
) {
  return reconcileQuietly(existing, candidates, {
    idPrefix: 'ta',
    // Every session but s-1 started after the rule was saved.
    taughtAfterSaved: (_fact, session) => session !== 's-1',
    ...options,
  });
}

const activeRule = (facts: readonly Fact[]) => facts.find((item) => item.id === RULE.id);

describe('a fact taught again', () => {
  it('counts three later sessions, two of them in other words, with the last date and the sessions', () => {
    const result = run(
      [RULE],
      [
        said('s-2', '2026-11-05', 'Use pnpm to install dependencies.'),
        said('s-3', '2026-11-09', 'Dependencies are installed with pnpm.', 'Installs'),
        said('s-4', '2026-11-12', 'Use pnpm to install dependencies!'),
      ],
    );
    expect(result.facts.filter((item) => item.status === 'active')).toHaveLength(1);
    expect(activeRule(result.facts)?.taughtAgain).toEqual({
      count: 3,
      last: '2026-11-12',
      sessions: ['s-2', 's-3', 's-4'],
    });
  });

  it('counts nothing twice: a run done again, or a session already among the sources', () => {
    const first = run([RULE], [said('s-2', '2026-11-05', 'Use pnpm to install dependencies.')]);
    const again = run(first.facts, [said('s-2', '2026-11-05', 'Use pnpm to install dependencies.')]);
    expect(activeRule(again.facts)?.taughtAgain?.count).toBe(1);
    const own = run([RULE], [said('s-1', '2026-11-01', 'Use pnpm to install dependencies.')]);
    expect(activeRule(own.facts)?.taughtAgain).toBeUndefined();
  });

  it('is not counted for a session that started before the fact was saved, nor for a fact learned in the same run', () => {
    const before = run([RULE], [said('s-0', '2026-10-30', 'Use pnpm to install dependencies.')], {
      taughtAfterSaved: () => false,
    });
    expect(activeRule(before.facts)?.taughtAgain).toBeUndefined();
    const fresh = run(
      [],
      [
        said('s-1', '2026-11-01', 'Use pnpm to install dependencies.'),
        said('s-2', '2026-11-05', 'Dependencies are installed with pnpm.', 'Installs'),
      ],
    );
    expect(fresh.facts.map((item) => item.taughtAgain)).toEqual([undefined]);
  });

  it('is not an update: a new value supersedes the rule and nothing is counted', () => {
    const result = run(
      [RULE],
      [
        extractedFact({
          ...said('s-2', '2026-11-05', 'Use npm, not pnpm, from now on.'),
          replaces: [RULE.id],
        }),
      ],
    );
    expect(result.facts.every((item) => item.taughtAgain === undefined)).toBe(true);
  });

  it('is counted on a fact edited by hand too, whose text stays', () => {
    const edited = { ...RULE, editedByHand: true };
    const result = run([edited], [said('s-2', '2026-11-05', 'Use pnpm to install dependencies.')]);
    expect(activeRule(result.facts)).toMatchObject({ body: RULE.body, taughtAgain: { count: 1 } });
  });
});

describe('whether a session started after a fact was saved', () => {
  const starts = new Map([
    ['early', '2026-11-01T08:00:00Z'],
    ['late', '2026-11-03T08:00:00+01:00'],
  ]);
  const ledger: Record<string, string> = { 's-1': '2026-11-02T10:00:00Z' };
  const after = createTaughtAfterSaved(starts, (session) => ledger[session]);

  it('compares its start with the run that consolidated the first of the fact’s sources', () => {
    expect(after(RULE, 'late')).toBe(true);
    expect(after(RULE, 'early')).toBe(false);
    expect(after(RULE, 'unknown')).toBe(false);
  });

  it('takes a fact the ledger knows no source of as saved the day after it was observed', () => {
    const byHand = { ...RULE, sources: [], observed: '2026-11-02' };
    expect(after(byHand, 'late')).toBe(true);
    expect(after({ ...byHand, observed: '2026-11-03' }, 'late')).toBe(false);
  });
});

describe('a fact taught again after curation merged it', () => {
  it('counts on the merged fact the copy learned again joins', () => {
    const merged = fact(
      {
        id: 'f-merged0000',
        title: 'Tooling',
        body: 'Use pnpm to install dependencies. Run the linter before each commit.',
        sources: ['s-1', 's-2'],
      },
      'feedback',
    );
    const away = { ...RULE, status: 'superseded' as const, supersededBy: merged.id };
    const copy = fact(
      {
        id: 'f-copy000000',
        title: 'Package manager',
        body: RULE.body,
        sources: ['s-5'],
        observed: '2026-11-20',
      },
      'feedback',
    );
    const facts = [away, merged, copy];
    const taught = { saved: new Map([[merged.id, merged]]), taughtAfterSaved: () => true };
    const result = absorbRepeats(facts, [copy], new Set([away.id]), taught);
    expect(result.absorbed.has(copy.id)).toBe(true);
    expect(result.facts.find((item) => item.id === merged.id)?.taughtAgain).toEqual({
      count: 1,
      last: '2026-11-20',
      sessions: ['s-5'],
    });
    // Without the test of "after it was saved", nothing is counted.
    const plain = absorbRepeats(facts, [copy], new Set([away.id]));
    expect(plain.facts.find((item) => item.id === merged.id)?.taughtAgain).toBeUndefined();
  });
});
