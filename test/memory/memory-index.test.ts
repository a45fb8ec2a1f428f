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
  it('respects the line, byte and line-length limits on 10,000 facts, fast and deterministically', () => {
    const facts = manyFacts(10_000);
    const started = performance.now();
    const index = buildIndex(facts, { now: new Date('2026-12-01T00:00:00Z') });
    const elapsed = performance.now() - started;
    checkLimits(index.text);
    expect(index.included.length + index.omitted.length).toBe(
      facts.filter((f) => f.status === 'active').length,
    );
    expect(index.text).toMatch(/\(\d+ more facts in the topic files, not listed here\)\n$/);
    expect(buildIndex([...facts].reverse(), { now: new Date('2026-12-01T00:00:00Z') }).text).toBe(index.text);
    // Generous bound for a loaded CI machine; the bench measures the real figure.
    expect(elapsed).toBeLessThan(1000);
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

  it('keeps hand-written lines and counts them toward the limits', () => {
    const index = buildIndex([fact({ id: 'f-aaaaaaaaaa' })], {
      now: new Date('2026-12-01'),
      extraLines: ['- [Testing notes](feedback_testing.md) — run e2e'],
    });
    expect(index.text.split('\n')[1]).toBe('- [Testing notes](feedback_testing.md) — run e2e');
  });
});
