import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOCK_BEGIN, INDEX_HEADER, INDEX_LIMITS, splitIndexFile } from '../../src/memory/index-block.js';
import { buildIndex } from '../../src/memory/memory-index.js';
import type { Fact } from '../../src/memory/types.js';
import { fact, handWrittenFile, numberedFacts, withoutBlock } from './helpers.js';

function factsOf(count: number, seed: number): Fact[] {
  return numberedFacts(count, seed, (index) => ({
    title: `Fact ${seed}-${index} ${'ä'.repeat(index % 50)}`,
    body: `Body ${index} ${'word '.repeat(index % 30)}`,
  }));
}

const NOW = new Date('2026-12-01T00:00:00Z');

// A first line of exactly "# Memory index" is the file dreamd wrote before the block (migrated on purpose).
const handFile = handWrittenFile(
  [fc.string({ maxLength: 120 }).map((text) => `- [${text}](notes/${text.length}.md) — ${text}`)],
  400,
).filter((text) => !text.startsWith(`${INDEX_HEADER}\n`) && text !== INDEX_HEADER);

describe("dreamd's block of MEMORY.md", () => {
  it('never changes a byte outside the block, over any number of runs, on any hand-written file', () => {
    fc.assert(
      fc.property(
        handFile,
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 4 }),
        (original, runs) => {
          let text: string | null = original === '' ? null : original;
          for (const [run, count] of runs.entries()) {
            const index = buildIndex(factsOf(count, run), { now: NOW, existing: text });
            text = index.text;
            expect(withoutBlock(text)).toBe(original);
            const outsideLines =
              original === '' ? 0 : original.split('\n').length - (original.endsWith('\n') ? 1 : 0);
            if (
              outsideLines + 3 <= INDEX_LIMITS.maxLines &&
              Buffer.byteLength(original) + 400 <= INDEX_LIMITS.maxBytes
            ) {
              const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
              expect(lines).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
              expect(Buffer.byteLength(text)).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
            }
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it('shrinks to nothing, cuts nothing and says why when the hand-written lines alone pass the limit', () => {
    const original = Array.from({ length: 212 }, (_, index) => `- note ${index}`).join('\n') + '\n';
    const index = buildIndex(factsOf(20, 1), { now: NOW, existing: original });
    expect(index.text).toBe(original);
    expect(index.included).toEqual([]);
    expect(index.omitted).toHaveLength(20);
    expect(index.problems.join('\n')).toMatch(/212 of 200 lines.*nothing of yours is cut/);
  });

  it('gets what the other lines leave: 190 hand lines leave room for the rest', () => {
    const original = Array.from({ length: 190 }, (_, index) => `- note ${index}`).join('\n') + '\n';
    const index = buildIndex(factsOf(40, 1), { now: NOW, existing: original });
    expect(index.text.split('\n').length - 1).toBe(INDEX_LIMITS.maxLines);
    expect(index.text.startsWith(original)).toBe(true);
    expect(index.text).toContain('more user facts in user.md, not listed here');
  });

  it('puts the block before a last line that has no line break, adding no byte to it', () => {
    const original = '# Mine\n- [A](a.md) — no final break';
    const index = buildIndex(factsOf(2, 1), { now: NOW, existing: original });
    expect(index.text.endsWith(original)).toBe(true);
    expect(index.text.startsWith(BLOCK_BEGIN)).toBe(true);
  });

  it('leaves a file with a damaged block alone and reports it', () => {
    const original = `# Mine\n${BLOCK_BEGIN}\n- [x](user.md#f-aaaaaaaaaa)\n`;
    const index = buildIndex(factsOf(3, 1), { now: NOW, existing: original });
    expect(index.writable).toBe(false);
    expect(index.problems.join('\n')).toContain('markers');
  });

  it("moves the lines of a MEMORY.md written before the block into the block once, keeping the person's lines", () => {
    const legacy = [
      INDEX_HEADER,
      '- [Testing notes](feedback_testing.md) — run e2e first',
      '- [Old fact](user.md#f-aaaaaaaaaa) — the user likes tea',
      '(3 more facts in the topic files, not listed here)',
      'My own line',
      '',
    ].join('\n');
    expect(splitIndexFile(legacy).kind).toBe('legacy');
    const facts = [fact({ id: 'f-aaaaaaaaaa', title: 'Old fact', body: 'The user likes tea' })];
    const first = buildIndex(facts, { now: NOW, existing: legacy });
    expect(withoutBlock(first.text)).toBe(
      '- [Testing notes](feedback_testing.md) — run e2e first\nMy own line\n',
    );
    expect(first.text.match(/f-aaaaaaaaaa/g)).toHaveLength(1);
    expect(splitIndexFile(first.text).kind).toBe('block');
    expect(buildIndex(facts, { now: NOW, existing: first.text }).text).toBe(first.text);
  });
});
