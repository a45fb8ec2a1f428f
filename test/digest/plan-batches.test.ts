import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  digestSession,
  estimateTokens,
  expectedFacts,
  expectedOutputTokens,
  planBatches,
  splitBatch,
} from '../../src/digest/index.js';
import type { Batch, SessionDigest } from '../../src/digest/index.js';
import { generateAgentSession, generateDialogue } from './generate.js';
import { assistant, makeSession, user } from './sessions.js';

function smallDigest(id: string, messages = 6): SessionDigest {
  const turns = Array.from({ length: messages }, (_, index) =>
    index % 2 === 0 ? user(`question ${index} about ${id}`) : assistant(`answer ${index} for ${id}`),
  );
  return digestSession(makeSession(id, '2026-11-20T09:00:00Z', turns));
}

/** Every digest line in batch order, without headers. */
function bodyLines(batches: readonly Batch[]): string[] {
  return batches.flatMap((batch) =>
    batch.text.split('\n').filter((line) => line !== '' && !line.startsWith('### ')),
  );
}

describe('planBatches', () => {
  it('puts five ordinary sessions into one call', () => {
    const digests = ['a', 'b', 'c', 'd', 'e'].map((id) => smallDigest(id));
    const batches = planBatches(digests, { tokensPerCall: 24_000 });
    expect(batches).toHaveLength(1);
    const [batch] = batches;
    expect(batch?.sessionIds).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(batch?.parts).toEqual(['a', 'b', 'c', 'd', 'e'].map((sessionId) => ({ sessionId })));
    expect(batch?.text).toBe(digests.map((digest) => digest.text).join('\n\n'));
    expect(batch?.estimatedTokens).toBe(estimateTokens(batch?.text ?? ''));
  });

  it('puts five generated agent sessions of a working day into at most two calls at the default budget', () => {
    const digests = [1, 2, 3, 4, 5].map((seed) => digestSession(generateAgentSession(`s${seed}`, seed, 8)));
    expect(planBatches(digests, { tokensPerCall: 24_000 }).length).toBeLessThanOrEqual(2);
  });

  it('splits one huge session into several parts, each under budget, each with the session header', () => {
    const digest = digestSession(generateDialogue('huge', 7, 120));
    const tokensPerCall = 2_000;
    expect(digest.estimatedTokens).toBeGreaterThan(3 * tokensPerCall);
    const batches = planBatches([digest], { tokensPerCall });
    expect(batches.length).toBeGreaterThan(3);
    batches.forEach((batch, index) => {
      expect(batch.estimatedTokens).toBeLessThanOrEqual(tokensPerCall);
      expect(batch.text.startsWith(`${digest.header} · part ${index + 1}\n`)).toBe(true);
      expect(batch.sessionIds).toEqual(['huge']);
    });
    expect(bodyLines(batches)).toEqual(digest.lines.map((line) => line.text));
    const ranges = batches.map((batch) => batch.parts[0]);
    expect(ranges[0]?.fromMessage).toBe(0);
    expect(ranges.at(-1)?.toMessage).toBe(digest.toMessage);
    for (let index = 1; index < ranges.length; index += 1) {
      expect(ranges[index]?.fromMessage).toBeGreaterThanOrEqual(ranges[index - 1]?.toMessage ?? 0);
    }
  });

  it('loses nothing and repeats nothing: every line appears in exactly one batch, in order', () => {
    const digests = [
      smallDigest('first'),
      digestSession(generateDialogue('big', 3, 60)),
      smallDigest('middle', 30),
      digestSession(generateAgentSession('agent', 4, 12)),
      smallDigest('last', 2),
    ];
    const batches = planBatches(digests, { tokensPerCall: 3_000 });
    for (const batch of batches) expect(batch.estimatedTokens).toBeLessThanOrEqual(3_000);
    const all = bodyLines(batches);
    const expected = digests.flatMap((digest) => digest.lines.map((line) => line.text));
    expect(all.length).toBe(expected.length);
    expect([...all].sort()).toEqual([...expected].sort());
    for (const digest of digests) {
      const own = new Set(digest.lines.map((line) => line.text));
      expect(all.filter((line) => own.has(line))).toEqual(digest.lines.map((line) => line.text));
      const parts = batches
        .flatMap((batch) => batch.parts)
        .filter((part) => part.sessionId === digest.sessionId);
      if (digest.estimatedTokens <= 3_000) expect(parts).toEqual([{ sessionId: digest.sessionId }]);
      else expect(parts.length).toBeGreaterThan(1);
    }
  });

  it('fills earlier calls first and keeps input order inside a batch', () => {
    const big = smallDigest('big', 40);
    const medium = smallDigest('medium', 10);
    const small = smallDigest('small', 2);
    // Room for big + small in one call, not for big + medium.
    const budget = Math.ceil((big.chars + 2 + small.chars) / 4);
    expect(big.chars + 2 + medium.chars).toBeGreaterThan(budget * 4);
    const batches = planBatches([big, medium, small], { tokensPerCall: budget });
    expect(batches.map((batch) => batch.sessionIds)).toEqual([['big', 'small'], ['medium']]);
    expect(batches[0]?.text).toBe(`${big.text}\n\n${small.text}`);
  });

  it('breaks a single user message longer than a whole call into continued pieces without losing a word', () => {
    const long = Array.from({ length: 3_000 }, (_, index) => `word${index}`).join(' ');
    const digest = digestSession(makeSession('long', '2026-11-20T09:00:00Z', [user(long)]));
    const batches = planBatches([digest], { tokensPerCall: 1_000 });
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) expect(batch.estimatedTokens).toBeLessThanOrEqual(1_000);
    const rejoined = bodyLines(batches)
      .map((line) => line.replace(/^\(cont\.\) /, ''))
      .join(' ');
    expect(rejoined).toBe(digest.lines[0]?.text);
  });

  it('returns no batch for no digest', () => {
    expect(planBatches([], { tokensPerCall: 24_000 })).toEqual([]);
  });

  it('refuses a budget too small to hold a part header and a line', () => {
    const digest = digestSession(generateDialogue('d', 1, 4));
    expect(() => planBatches([digest], { tokensPerCall: 10 })).toThrow(ConfigError);
  });

  it('closes a batch before its expected answer passes the output budget, keeping every line once', () => {
    const digests = [1, 2, 3].map((seed) => digestSession(generateDialogue(`talk${seed}`, seed, 80)));
    const inputOnly = planBatches(digests, { tokensPerCall: 24_000 });
    const outputTokensPerCall = 1_000;
    const batches = planBatches(digests, { tokensPerCall: 24_000, outputTokensPerCall });
    expect(batches.length).toBeGreaterThan(inputOnly.length);
    for (const batch of batches) {
      expect(batch.expectedOutputTokens).toBeLessThanOrEqual(outputTokensPerCall);
      expect(batch.expectedOutputTokens).toBe(
        batch.segments.reduce((sum, segment) => sum + expectedOutputTokens(segment.lines), 0),
      );
    }
    expect([...bodyLines(batches)].sort()).toEqual(
      digests.flatMap((digest) => digest.lines.map((line) => line.text)).sort(),
    );
  });

  it('closes a batch before its user lines could carry more facts than an answer may hold, keeping every line once', () => {
    const digests = [1, 2, 3].map((seed) => digestSession(generateDialogue(`talk${seed}`, seed, 80)));
    const factsPerCall = 25;
    const batches = planBatches(digests, { tokensPerCall: 24_000, factsPerCall });
    expect(batches.length).toBeGreaterThan(planBatches(digests, { tokensPerCall: 24_000 }).length);
    for (const batch of batches) {
      const facts = batch.segments.reduce((sum, segment) => sum + expectedFacts(segment.lines), 0);
      expect(facts).toBeGreaterThan(0);
      expect(facts).toBeLessThanOrEqual(factsPerCall);
    }
    expect([...bodyLines(batches)].sort()).toEqual(
      digests.flatMap((digest) => digest.lines.map((line) => line.text)).sort(),
    );
  });

  it('splits a batch into two halves that carry exactly its lines, down to a single line', () => {
    const digests = ['a', 'b', 'c'].map((id) => smallDigest(id, 8));
    const [batch] = planBatches(digests, { tokensPerCall: 24_000 });
    const halves = splitBatch(batch!);
    expect(halves?.map((half) => half.sessionIds)).toEqual([['a', 'b'], ['c']]);
    expect(bodyLines(halves!)).toEqual(bodyLines([batch!]));
    // One session: its lines in two parts, each with the session header and its message range.
    const [lines1, lines2] = splitBatch(halves![1])!;
    expect(lines1.text.startsWith(`${digests[2]!.header} · part 1\n`)).toBe(true);
    expect(lines2.text.startsWith(`${digests[2]!.header} · part 2\n`)).toBe(true);
    expect(bodyLines([lines1, lines2])).toEqual(digests[2]!.lines.map((line) => line.text));
    expect(lines2.parts[0]?.fromMessage).toBeGreaterThan(lines1.parts[0]?.toMessage ?? Infinity);
    let single = lines1;
    for (let halves = splitBatch(single); halves !== undefined; halves = splitBatch(single))
      single = halves[0];
    expect(single.segments[0]?.lines).toHaveLength(1);
  });
});
