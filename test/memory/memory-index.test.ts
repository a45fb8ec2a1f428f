import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, buildIndex, indexLine } from '../../src/memory/memory-index.js';
import { FACT_TYPES, type Fact } from '../../src/memory/types.js';
import { fact } from './helpers.js';

function manyFacts(count: number): Fact[] {
  return Array.from({ length: count }, (_, index) => {
    const type = FACT_TYPES[index % 4] ?? 'user';
    const day = String((index % 28) + 1).padStart(2, '0');
    return fact(
      {
        id: `f-${index.toString(36).padStart(10, 'a')}`,
        title: index % 7 === 0 ? `Très long titre ${'ü'.repeat(200)} ${index}` : `Fact number ${index}`,
        body:
          index % 5 === 0 ? `${'日本語のテキスト'.repeat(40)}` : `The user said thing ${index} in a session.`,
        updated: `2026-11-${day}`,
        sources: Array.from({ length: (index % 3) + 1 }, (__, source) => `s-${source}`),
        status: index % 11 === 0 ? 'superseded' : 'active',
      },
      type,
    );
  });
}

function checkLimits(text: string): void {
  const lines = text.split('\n');
  expect(lines.at(-1)).toBe('');
  expect(lines.length - 1).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
  expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
  for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(INDEX_LIMITS.maxLineChars);
}

describe('MEMORY.md index', () => {
  it('respects the line, byte and line-length limits on 10,000 facts, deterministically (its speed is a bench figure)', () => {
    const facts = manyFacts(10_000);
    const index = buildIndex(facts, { now: new Date('2026-12-01T00:00:00Z') });
    checkLimits(index.text);
    expect(index.included.length + index.omitted.length).toBe(
      facts.filter((f) => f.status === 'active').length,
    );
    for (const type of FACT_TYPES)
      expect(index.text).toMatch(
        new RegExp(`\\(\\d+ more ${type} facts in ${type}\\.md, not listed here\\)\n`),
      );
    expect(buildIndex([...facts].reverse(), { now: new Date('2026-12-01T00:00:00Z') }).text).toBe(index.text);
    // Generous bound for a loaded CI machine; the bench measures the real figure.
  });

  it('hits the byte limit before the line limit with long multibyte lines', () => {
    const facts = Array.from({ length: 300 }, (_, index) =>
      fact({
        id: `f-${index.toString(36).padStart(10, 'b')}`,
        title: '長い'.repeat(30),
        body: '説明'.repeat(100),
      }),
    );
    const index = buildIndex(facts, { now: new Date('2026-12-01') });
    checkLimits(index.text);
    expect(index.omitted.length).toBeGreaterThan(0);
  });

  it('ranks feedback first, then by recency and number of sources, and lists no superseded fact', () => {
    const facts = [
      fact({ id: 'f-reference1', updated: '2026-11-30' }, 'reference'),
      fact({ id: 'f-userolder1', updated: '2026-11-01' }, 'user'),
      fact({ id: 'f-usernewer1', updated: '2026-11-20' }, 'user'),
      fact({ id: 'f-usersrcs11', updated: '2026-11-20', sources: ['a', 'b'] }, 'user'),
      fact({ id: 'f-feedback11', updated: '2026-10-01' }, 'feedback'),
      fact({ id: 'f-supersede1', status: 'superseded' }, 'feedback'),
    ];
    const index = buildIndex(facts, { now: new Date('2026-12-01') });
    expect(index.included).toEqual([
      'f-feedback11',
      'f-usersrcs11',
      'f-usernewer1',
      'f-userolder1',
      'f-reference1',
    ]);
    expect(index.text).toContain(
      '- [Title of f-feedback11](feedback.md#f-feedback11) — Body of f-feedback11.',
    );
  });

  it('shortens a long hook and title on a character boundary with an ellipsis', () => {
    const line = indexLine(
      fact({ id: 'f-aaaaaaaaaa', title: `Emoji 🙂 ${'x'.repeat(200)}`, body: `🙂${'y'.repeat(300)}` }),
    );
    expect(Array.from(line).length).toBeLessThanOrEqual(150);
    expect(line).toContain('…');
    expect(line).toContain('(user.md#f-aaaaaaaaaa)');
    expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
  });

  it('keeps the lines outside its block and counts them toward the limits', () => {
    const existing = '# My notes\n- [Testing notes](feedback_testing.md) — run e2e\n';
    const index = buildIndex(manyFacts(400), { now: new Date('2026-12-01'), existing });
    expect(index.text.startsWith(existing)).toBe(true);
    checkLimits(index.text);
    expect(index.omitted.length).toBeGreaterThan(0);
    expect(index.problems.join('\n')).toContain('lines outside it');
  });

  it('gives every type a fair share: three project facts next to five hundred user facts', () => {
    const facts = [
      ...Array.from({ length: 500 }, (_, index) =>
        fact({ id: `f-u${String(index).padStart(9, '0')}`, title: `User fact ${index}` }),
      ),
      ...['a', 'b', 'c'].map((letter) =>
        fact({ id: `f-project00${letter}`, title: `Project ${letter}` }, 'project'),
      ),
    ];
    const index = buildIndex(facts, { now: new Date('2026-12-01') });
    for (const letter of ['a', 'b', 'c']) expect(index.included).toContain(`f-project00${letter}`);
    expect(index.text).not.toContain('more project facts');
    expect(index.text).toMatch(/\(\d+ more user facts in user\.md, not listed here\)\n- \[Project a\]/);
  });

  it('lists a long-lived fact next to the recent ones', () => {
    const recent = Array.from({ length: 400 }, (_, index) =>
      fact({
        id: `f-r${String(index).padStart(9, '0')}`,
        title: `Recent ${index}`,
        updated: '2026-11-30',
        observed: '2026-11-30',
      }),
    );
    const established = fact({
      id: 'f-oldbutgood',
      title: 'Works in Lisbon',
      observed: '2025-01-10',
      updated: '2025-01-10',
      sources: ['s1', 's2', 's3', 's4', 's5'],
    });
    const index = buildIndex([...recent, established], { now: new Date('2026-12-01') });
    expect(index.included.slice(0, 2)).toContain('f-oldbutgood');
  });

  it('breaks ties by content, so the same facts in any order give the same bytes', () => {
    const facts = Array.from({ length: 600 }, (_, index) =>
      fact(
        {
          id: `f-t${String(index).padStart(9, '0')}`,
          title: `Same day ${index % 37}`,
          body: `Body ${index}`,
        },
        FACT_TYPES[index % 4],
      ),
    );
    const shuffled = [...facts].sort(
      (a, b) =>
        ((a.body.length * 7919 + a.title.length) % 13) - ((b.body.length * 7919 + b.title.length) % 13) ||
        (a.id < b.id ? 1 : -1),
    );
    const first = buildIndex(facts, { now: new Date('2026-12-01') });
    expect(buildIndex(shuffled, { now: new Date('2026-12-01') }).text).toBe(first.text);
    expect(
      buildIndex(first.included.length ? facts : [], { now: new Date('2026-12-01'), existing: first.text })
        .text,
    ).toBe(first.text);
  });
});
