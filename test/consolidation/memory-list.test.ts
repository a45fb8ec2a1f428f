import { describe, expect, it } from 'vitest';
import { resolveRunReplaces, runFactId } from '../../src/consolidation/extraction/extract.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import {
  buildExtractionParts,
  buildExtractionPrompt,
} from '../../src/consolidation/extraction/extraction.js';
import {
  createMemoryList,
  lineTokens,
  type MemoryListFact,
} from '../../src/consolidation/extraction/memory-list.js';
import { MIN_CACHED_PREFIX_TOKENS } from '../../src/consolidation/extraction/tunables.js';
import { extractedFact, reconcileQuietly } from '../memory/helpers.js';

function fact(index: number, title: string, updated = '2026-01-01', body = title): MemoryListFact {
  return {
    id: `f-${String(index).padStart(6, '0')}`,
    type: 'user',
    title,
    hook: body,
    searchText: `${title}\n${body}`,
    updated,
  };
}

/** 500 facts of filler subjects, one about Lisbon far down the ranking and old. */
function bigMemory(): MemoryListFact[] {
  const facts = Array.from({ length: 500 }, (_, index) =>
    fact(index, `Preference number ${index} about tooling`, '2026-01-01', `Uses tool ${index} for chores`),
  );
  facts[480] = fact(480, 'Home address', '2025-03-01', 'Lives in Lisbon, Rua das Flores 28');
  return facts;
}

const tokensOf = (
  entries: readonly MemoryListFact[] | readonly { id: string }[],
  all: readonly MemoryListFact[],
) => entries.reduce((sum, entry) => sum + lineTokens(all.find((candidate) => candidate.id === entry.id)!), 0);

describe('memory list of one call', () => {
  it('shows the old fact the digest talks about, inside a budget of 200 tokens plus 10 % of the digest', () => {
    const facts = bigMemory();
    const list = createMemoryList(facts, { maxTokensPerCall: 4000, calls: 1, instructionTokens: 1100 });
    const digest = 'user: we are moving out of Lisbon next month, the flat on Rua das Flores is sold';
    const chosen = list.select(digest, 2000, []);
    expect(list.stable).toEqual([]);
    expect(chosen.map((entry) => entry.title)).toContain('Home address');
    expect(tokensOf(chosen, facts)).toBeLessThanOrEqual(200 + 0.1 * 2000);
    expect(chosen.length).toBeGreaterThan(1); // recent facts fill the rest
  });

  it('fills what relevance leaves with the most recently updated facts', () => {
    const facts = [
      fact(1, 'Old one', '2025-01-01'),
      fact(2, 'Newest one', '2026-06-01'),
      fact(3, 'Middle one', '2026-01-01'),
    ];
    const list = createMemoryList(facts, { maxTokensPerCall: 4000, calls: 1, instructionTokens: 1100 });
    const chosen = list.select('nothing in common here', 10, []);
    expect(chosen.map((entry) => entry.title)).toEqual(['Newest one', 'Middle one', 'Old one']);
  });

  it('lists the facts of earlier calls of the run first, newest first', () => {
    const list = createMemoryList([fact(1, 'Something else')], {
      maxTokensPerCall: 4000,
      calls: 2,
      instructionTokens: 1100,
    });
    const run = [
      { id: runFactId(0), type: 'user' as const, title: 'Home address', hook: 'Lives in Lisbon' },
      { id: runFactId(1), type: 'user' as const, title: 'Coffee order', hook: 'Oat flat white' },
    ];
    expect(list.select('digest', 1000, run).map((entry) => entry.id)).toEqual(['run-2', 'run-1', 'f-000001']);
  });

  it('gives a run of several calls one stable part, large enough to be cached, and never repeats it', () => {
    const facts = bigMemory();
    const list = createMemoryList(facts, { maxTokensPerCall: 4000, calls: 3, instructionTokens: 1100 });
    const stableTokens = tokensOf(list.stable, facts);
    expect(stableTokens + 1100).toBeGreaterThanOrEqual(MIN_CACHED_PREFIX_TOKENS);
    expect(list.stable[0]!.id).toBe(facts[0]!.id);
    const chosen = list.select('Lisbon Rua das Flores', 20_000, []);
    const stableIds = new Set(list.stable.map((entry) => entry.id));
    expect(chosen.some((entry) => stableIds.has(entry.id))).toBe(false);
    expect(stableTokens + tokensOf(chosen, facts)).toBeLessThanOrEqual(4000);
    expect(chosen.map((entry) => entry.title)).toContain('Home address');
  });

  it('puts the stable part in a prefix the rest of the prompt follows, with the same text as one prompt', () => {
    const facts = bigMemory();
    const stable = facts.slice(0, 3);
    const parts = buildExtractionParts({
      stable,
      index: [facts[480]!],
      digestText: 'user: hi',
      today: '2026-11-27',
    });
    expect(parts.prefix).toMatch(/^## Current memory/);
    expect(parts.prefix).toContain(facts[0]!.id);
    expect(parts.prompt).not.toContain(facts[0]!.id);
    expect(parts.prompt).toContain('Home address');
    expect(
      buildExtractionPrompt({ stable, index: [facts[480]!], digestText: 'user: hi', today: '2026-11-27' }),
    ).toBe(`${parts.prefix}\n${parts.prompt}`);
    expect(buildExtractionParts({ index: [], digestText: 'x', today: '2026-11-27' }).prefix).toBeUndefined();
  });
});

function extracted(title: string, observed: string, replaces: string[] = []): ExtractedFact {
  return extractedFact({ title, body: title, observed, sources: ['s'], replaces });
}

describe('facts that replace a fact of an earlier call of the same run', () => {
  it('keep the older one when it replaced memory, and hand its memory ids on to the newer', () => {
    const result = resolveRunReplaces([
      extracted('Lives in Lisbon', '2026-11-01', ['f-old']),
      extracted('Lives in Porto', '2026-11-10', ['run-1']),
    ]);
    expect(result.map((candidate) => [candidate.title, candidate.replaces])).toEqual([
      ['Lives in Lisbon', ['f-old']],
      ['Lives in Porto', ['f-old', 'Lives in Lisbon']],
    ]);
  });

  it('keep every older one as history, each named by title by the next, along a chain of three', () => {
    const chain = [
      extracted('Lives in Lisbon', '2026-11-01'),
      extracted('Lives in Porto', '2026-11-10', ['run-1']),
      extracted('Lives in Braga', '2026-11-20', ['run-2']),
    ];
    const result = resolveRunReplaces(chain);
    expect(result.map((candidate) => [candidate.title, candidate.replaces])).toEqual([
      ['Lives in Lisbon', []],
      ['Lives in Porto', ['Lives in Lisbon']],
      // What the older one replaced is handed on; reconcile follows the chain to its newest.
      ['Lives in Braga', ['Lives in Lisbon', 'Lives in Porto']],
    ]);
    // Reconciled, the newest is the one active fact and the others are its history: nothing lost.
    const reconciled = reconcileQuietly([], result);
    expect(reconciled.facts.filter((fact) => fact.status === 'active').map((fact) => fact.title)).toEqual([
      'Lives in Braga',
    ]);
    expect(reconciled.facts.map((fact) => fact.title).sort()).toEqual([
      'Lives in Braga',
      'Lives in Lisbon',
      'Lives in Porto',
    ]);
  });

  it('keep the newest observation when the later call carried the older session, and the older as history', () => {
    const result = resolveRunReplaces([
      extracted('Lives in Porto', '2026-11-10'),
      extracted('Lives in Lisbon', '2026-11-01', ['run-1']),
    ]);
    expect(result.map((candidate) => [candidate.title, candidate.replaces])).toEqual([
      ['Lives in Porto', ['Lives in Lisbon']],
      ['Lives in Lisbon', []],
    ]);
  });

  it('keep one of two of the same day: no order to apply them in', () => {
    const result = resolveRunReplaces([
      extracted('Lives in Porto', '2026-11-10'),
      extracted('Lives in Lisbon', '2026-11-10', ['run-1']),
    ]);
    expect(result.map((candidate) => candidate.title)).toEqual(['Lives in Lisbon']);
  });

  it('ignore a run id that names no earlier candidate', () => {
    const result = resolveRunReplaces([extracted('Alone', '2026-11-10', ['run-7'])]);
    expect(result).toEqual([extracted('Alone', '2026-11-10')]);
  });
});
