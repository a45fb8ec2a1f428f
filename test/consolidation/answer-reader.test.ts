import { describe, expect, it } from 'vitest';
import {
  AnswerFactLimitError,
  AnswerInvalidError,
  createAnswerReader,
  droppedAnswer,
} from '../../src/consolidation/extraction/answer-reader.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { rawFact } from './helpers.js';

const LIMITS = { maxFactChars: 400, maxFactsPerAnswer: 5, maxFactsPerSession: 3, maxAnswerChars: 100_000 };

const item = (index: number, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  rawFact(index, { title: `Step ${index}`, ...overrides });

const to =
  (...sessions: string[]) =>
  (fact: ExtractedFact): ExtractedFact => ({ ...fact, sources: sessions });

describe('createAnswerReader', () => {
  it('reads none of an answer past maxFactsPerAnswer and counts nothing for it', () => {
    const reader = createAnswerReader(LIMITS);
    expect(() =>
      reader.read(
        [1, 2, 3, 4, 5, 6].map((index) => item(index)),
        to('s1'),
      ),
    ).toThrow(AnswerFactLimitError);
    expect(reader.factsDropped).toEqual({});
    // The session's count was not touched: its halves are read in full.
    expect(reader.read([item(1), item(2), item(3)], to('s1')).facts).toHaveLength(3);
  });

  it('refuses an answer whose every fact is invalid, as an answer its sessions wait for', () => {
    const reader = createAnswerReader(LIMITS);
    let thrown: unknown;
    try {
      reader.read([item(1, { type: 'opinion' }), item(2, { body: 'x'.repeat(500) })], to('s1'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AnswerInvalidError);
    expect(droppedAnswer(thrown)?.reason).toBe('answer-invalid');
    expect(droppedAnswer(thrown)?.detail).toMatch(/1 schema, 1 fact-too-large/);
    expect(reader.factsDropped).toEqual({});
  });

  it('keeps the valid facts of an answer, counting the invalid ones as dropped', () => {
    const reader = createAnswerReader(LIMITS);
    const read = reader.read([item(1), item(2, { type: 'opinion' })], to('s1'));
    expect(read.facts.map((fact) => fact.title)).toEqual(['Step 1']);
    expect(read.dropped).toEqual({ schema: 1 });
    expect(reader.factsDropped).toEqual({ schema: 1 });
    expect(reader.notes()[0]).toMatch(/1 fact\(s\) of the answers were dropped as invalid \(1 schema\)/);
  });

  it('names a session that reaches maxFactsPerSession over the run, so it waits from that batch', () => {
    const reader = createAnswerReader(LIMITS);
    expect(reader.read([item(1), item(2)], to('s1')).overSessionLimit.size).toBe(0);
    const second = reader.read([item(3), item(4), item(5)], to('s1'));
    expect(second.facts.map((fact) => fact.title)).toEqual(['Step 3']);
    expect([...second.overSessionLimit]).toEqual(['s1']);
    expect(reader.factsDropped).toEqual({});
  });

  it('asks again smaller when one answer alone passes maxFactsPerSession for a session', () => {
    const reader = createAnswerReader(LIMITS);
    expect(() =>
      reader.read(
        [1, 2, 3, 4].map((index) => item(index)),
        to('s2'),
      ),
    ).toThrow(/4 facts for one session, over limits\.maxFactsPerSession \(3\)/);
  });
});
