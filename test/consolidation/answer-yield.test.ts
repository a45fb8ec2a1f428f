import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createAnswerYield,
  expectedOverLimit,
  factsPerUserLine,
  observeAnswer,
} from '../../src/consolidation/extraction/answer-yield.js';
import { YIELD_MARGIN } from '../../src/consolidation/extraction/tunables.js';
import { estimateTokens, type Batch } from '../../src/digest/index.js';
import { listRuns } from '../../src/space/index.js';
import { type AnthropicReply } from '../../harness/fake-anthropic-server.js';
import { isUpdateCheckRequest, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { cliAt, useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, type TestSpace } from '../support/space.js';
import { forcedRunAt, withLimits } from './helpers.js';

/**
 * Batches are sized at the facts a user line yields: learned from the space's last run, and from this run's
 * answers as they come, so a dense dialogue's answers are seldom over `limits.maxFactsPerAnswer` and thrown
 * away. The pipeline runs through the real SDK against the fake server.
 */

const fake = useFakeAnthropic();

/** A batch of `lines` user lines (and as many assistant lines) in one session. */
function batchOf(lines: number): Batch {
  const digestLines = Array.from({ length: lines * 2 }, (_, at) => ({
    message: at,
    text: at % 2 === 0 ? `user: rule ${at}` : `assistant: noted ${at}`,
  }));
  const header = '### session s-1 · 2026-11-01';
  const text = [header, ...digestLines.map((line) => line.text)].join('\n');
  return {
    sessionIds: ['s-1'],
    text,
    estimatedTokens: estimateTokens(text),
    expectedOutputTokens: 0,
    parts: [{ sessionId: 's-1' }],
    segments: [{ sessionId: 's-1', header, lines: digestLines }],
  };
}

describe('the answer yield', () => {
  it('starts at the prior and moves to what answers carry', () => {
    const seen = createAnswerYield(0.5);
    expect(factsPerUserLine(seen)).toBe(0.5);
    observeAnswer(seen, batchOf(8), 16);
    expect(factsPerUserLine(seen)).toBeCloseTo(1.7, 5);
    for (let call = 0; call < 10; call += 1) observeAnswer(seen, batchOf(8), 16);
    expect(factsPerUserLine(seen)).toBeGreaterThan(1.95);
  });

  it('says a batch is over the answer limit with a margin', () => {
    const seen = createAnswerYield(1);
    expect(expectedOverLimit(seen, batchOf(8), 10)).toBe(false);
    expect(expectedOverLimit(seen, batchOf(9), 10)).toBe(true);
    expect(8 * YIELD_MARGIN).toBeLessThanOrEqual(10);
  });
});

/** A session of `lines` user lines, each stating two rules. */
function denseSession(test: TestSpace, id: string, day: number, lines: number): void {
  const at = (minute: number) =>
    `2026-11-${String(day).padStart(2, '0')}T10:${String(minute).padStart(2, '0')}:00Z`;
  const messages = Array.from({ length: lines }, (_, index) => [
    {
      role: 'user',
      ts: at(index),
      content: `Rule ${id}-${index}a: name files in kebab case ${index}. Rule ${id}-${index}b: tabs ${index}.`,
    },
    { role: 'assistant', ts: at(index), content: 'Noted.' },
  ]).flat();
  writeFileSync(
    join(test.root, 'sessions', `${id}.json`),
    JSON.stringify({ id, agent: 'coder', startedAt: at(0), endedAt: at(lines), messages }),
  );
}

/** Two facts for every user line of the prompt's sessions, as a model reading this dialogue would give. */
function twoFactsALine(request: { prompt: string }): AnthropicReply {
  return factsOfRules(request, /Rule (\S+)a: .*? Rule (\S+)b: /g);
}

/** One fact for every user line (its first rule only): a register read out line by line. */
function oneFactALine(request: { prompt: string }): AnthropicReply {
  return factsOfRules(request, /Rule (\S+)a: /g);
}

/** A fact for each rule of the prompt's sessions that `pattern` matches (its groups name the rules). */
function factsOfRules(request: { prompt: string }, pattern: RegExp): AnthropicReply {
  if (isUpdateCheckRequest(request as never)) return { json: { updates: [] } };
  const facts = sessionsInPrompt(request.prompt).flatMap((session) =>
    [...session.text.matchAll(pattern)].flatMap((match) =>
      match.slice(1).map((rule) => ({
        type: 'feedback',
        title: `Rule ${rule}`,
        body: `Follow rule ${rule} in every file.`,
        why: null,
        howToApply: null,
        observed: session.date,
        sources: [session.id],
        replaces: [],
        confidence: null,
      })),
    ),
  );
  return { json: { facts } };
}

/**
 * A backlog of six dense sessions of 12 user lines each (`prefix`-1 to -6) that `answer` answers, consolidated
 * at most 10 facts an answer (but 1,000 a session and 100 calls a run).
 */
function denseBacklog(answer: (request: { prompt: string }) => AnthropicReply, prefix: string) {
  fake.server.setDefault(answer);
  const test = createTestSpace({ modelUrl: fake.url });
  for (let day = 1; day <= 6; day += 1) denseSession(test, `${prefix}-${day}`, day, 12);
  const config = withLimits(test.config, {
    maxFactsPerAnswer: 10,
    maxFactsPerSession: 1_000,
    maxCallsPerRun: 100,
  });
  return { test, consolidate: () => forcedRunAt(test, test.space, config) };
}

describe('a backlog of a fact a line', () => {
  it('throws no answer away: the probe is cut to what such an answer fits, and the rest split before sending', async () => {
    const run = await denseBacklog(oneFactALine, 'line').consolidate();
    expect(run.status).toBe('completed');
    expect(run.unconsolidated).toEqual([]);
    // Planned at half a fact a line (20 lines a call), the first answer held 20 facts: thrown away.
    expect(run.answersAskedAgain ?? 0).toBe(0);
    expect(run.factsPerUserLine).toBeGreaterThan(0.9);
  });
});

describe('a dense backlog', () => {
  it('throws away at most the answer of its probe in each run, and records the yield', async () => {
    const { test, consolidate } = denseBacklog(twoFactsALine, 'dense');

    const first = await consolidate();
    expect(first.status).toBe('completed');
    expect(first.unconsolidated).toEqual([]);
    // The old sizing (half a fact a line) threw away every answer of this dialogue: 24 lines a call, 48 facts.
    expect(first.answersAskedAgain ?? 0).toBeLessThanOrEqual(1);
    expect(first.factsPerUserLine).toBeGreaterThan(1.2);
    expect(first.callKinds).toEqual({
      extraction: expect.any(Number),
      updateCheck: expect.any(Number),
      curation: expect.any(Number),
    });
    expect(first.callKinds!.extraction + first.callKinds!.updateCheck + first.callKinds!.curation).toBe(
      first.calls,
    );

    for (let day = 7; day <= 12; day += 1) denseSession(test, `dense-${day}`, day, 12);
    const second = await consolidate();
    expect(second.status).toBe('completed');
    expect(second.answersAskedAgain ?? 0).toBeLessThanOrEqual(1);
    // The record keeps it, for `history` and `status`.
    const runs = await listRuns(test.space.memoryDir);
    expect(runs.at(-1)?.summary.factsPerUserLine).toBe(second.factsPerUserLine);
    // `history show` and `status` say the calls by kind; the first run's line says the answer thrown away.
    const shown = await cliAt(test.root, fake.url, ['history', 'show', runs.at(-2)!.runId]);
    const kinds = first.callKinds!;
    expect(shown.stdout).toContain(
      `  calls      ${kinds.extraction} extraction, ${kinds.updateCheck} update check, ${kinds.curation} curation`,
    );
    expect(shown.stdout).toContain(`${first.factsPerUserLine} facts a user line`);
    if ((first.answersAskedAgain ?? 0) > 0)
      expect(shown.stdout).toContain('1 answer thrown away and asked again in halves');
    const status = await cliAt(test.root, fake.url, ['status']);
    expect(status.stdout).toMatch(
      / {2}calls {6}\d+ extraction, \d+ update check, \d+ curation.* \(last run\)/,
    );
  });
});
