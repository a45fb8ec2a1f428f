import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spaceStatus } from '../../src/cli/space-status.js';
import type { Config } from '../../src/config/schema.js';
import type { RunRequest, RunSummary } from '../../src/core/run.js';
import { listRuns, readLedger } from '../../src/space/index.js';
import { type ScriptedFact } from '../../harness/scripted-extractor.js';
import { createTestSpace, type TestSpace, fastConsolidator, FORCED_RUN, RUN_NOW } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { activeFacts, withLimits } from './helpers.js';

/**
 * A session that needs more calls than `limits.maxCallsPerRun`: it is consolidated over several runs, part by
 * part, its progress in the ledger; facts are credited to the session they came from; the runs continue
 * without waiting for the gates and stop once it is done.
 */

const scheduled: RunRequest = { force: false, dryRun: false, trigger: 'schedule' };
const MESSAGES = 300;

const FACTS: ScriptedFact[] = [
  {
    trigger: 'my cat is called Pixel',
    type: 'user',
    title: 'Cat named Pixel',
    body: 'The user has a cat named Pixel.',
  },
  {
    trigger: 'we deploy on Fridays',
    type: 'project',
    title: 'Deploys on Fridays',
    body: 'The team deploys on Fridays.',
  },
  {
    trigger: 'I play chess online',
    type: 'user',
    title: 'Plays chess online',
    body: 'The user plays chess online.',
  },
  {
    trigger: 'the wiki is on Confluence',
    type: 'reference',
    title: 'Wiki on Confluence',
    body: 'The team wiki is on Confluence.',
  },
];

const fake = useFakeAnthropic({ facts: FACTS });

function writeNative(test: TestSpace, id: string, lines: readonly string[]): void {
  const messages = lines.map((line, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    ts: `2026-11-20T10:00:${String(index % 60).padStart(2, '0')}Z`,
    content: line,
  }));
  writeFileSync(
    join(test.space.sessionsDir, `${id}.json`),
    JSON.stringify({ id, startedAt: '2026-11-20T10:00:00Z', endedAt: '2026-11-20T12:00:00Z', messages }),
  );
}

function smallLimits(config: Config): Config {
  // About 40 messages a call and 2 calls a run: the big session needs 4 runs or so.
  return withLimits(config, { digestTokensPerCall: 600, maxCallsPerRun: 2 });
}

describe('a session bigger than a run', () => {
  it('is consolidated part by part over several runs, with each fact credited to its own session', async () => {
    const test = createTestSpace({ modelUrl: fake.url });
    const config = smallLimits(test.config);
    const lines = Array.from({ length: MESSAGES }, (_, index) =>
      index % 2 === 1
        ? 'Noted.'
        : `message ${index}: some ordinary talk about the weather and the week ahead`,
    );
    lines[10] = 'by the way my cat is called Pixel';
    lines[150] = 'also we deploy on Fridays';
    lines[290] = 'and I play chess online';
    writeNative(test, 'big', lines);
    writeNative(test, 'small', ['the wiki is on Confluence', 'Noted.']);
    const consolidate = fastConsolidator(config, { now: () => RUN_NOW });

    const summaries: RunSummary[] = [await consolidate(test.space, FORCED_RUN)];
    const afterFirst = await readLedger(test.space.memoryDir);
    expect(afterFirst.sessions.big?.progress).toMatchObject({ part: 1, totalMessages: MESSAGES });
    expect(afterFirst.sessions.big?.messageCount).toBeLessThan(MESSAGES);
    expect(summaries[0]?.reason).toMatch(/session big part 1 of ~\d+/);
    expect(summaries[0]?.notes?.join('\n')).toMatch(/session big part 1 of ~\d+/);
    const status = await spaceStatus(test.space, { config, now: () => RUN_NOW });
    expect(status.inProgress).toEqual([expect.stringMatching(/^session big part 1 of ~\d+ \(messages 0–/)]);

    // Scheduled runs (gates not FORCED_RUN) continue it until it is done, then stop finding work.
    for (let run = 0; run < 20; run += 1) {
      const summary = await consolidate(test.space, scheduled);
      summaries.push(summary);
      if (summary.status !== 'completed') break;
    }
    const last = summaries.at(-1)!;
    expect(last.status).toBe('skipped');
    const working = summaries.slice(0, -1);
    expect(working.length).toBeGreaterThanOrEqual(3);
    expect(working.every((summary) => summary.status === 'completed' && summary.calls <= 2)).toBe(true);
    expect(working.map((summary) => summary.reason ?? '').join('\n')).toMatch(/session big part 2 of ~\d+/);

    const ledger = await readLedger(test.space.memoryDir);
    expect(ledger.sessions.big).toMatchObject({ messageCount: MESSAGES });
    expect(ledger.sessions.big?.progress).toBeUndefined();
    expect(ledger.sessions.small).toBeDefined();
    const facts = await activeFacts(test);
    expect(facts.map((fact) => [fact.title, fact.sources]).sort()).toEqual([
      ['Cat named Pixel', ['big']],
      ['Deploys on Fridays', ['big']],
      ['Plays chess online', ['big']],
      ['Wiki on Confluence', ['small']],
    ]);
    // Every run that worked is in the history, and the big session's messages were each sent once or so:
    // no run resent what an earlier one consolidated.
    expect(await listRuns(test.space.memoryDir)).toHaveLength(working.length);
    const sentPixel = fake.server.requests.filter((request) =>
      request.prompt.includes('my cat is called Pixel'),
    );
    expect(sentPixel).toHaveLength(1);
  });

  it('reads no more of it than the calls of a run can carry, and the next run reads on from there', async () => {
    const test = createTestSpace({ modelUrl: fake.url });
    // Two calls of 2,000 tokens carry about 16,000 characters of digest (some 50 of the steps below); a run
    // reads four times that of the transcript (64,000 characters), where each step keeps 2,000 characters of
    // tool output (the reader's cap) that the digest cuts to 200: the read stops near step 31, first.
    const config = withLimits(test.config, {
      digestTokensPerCall: 2_000,
      memoryTokensPerCall: 0,
      maxCallsPerRun: 2,
    });
    const STEPS = 60;
    const planted = new Map([
      [3, 'by the way my cat is called Pixel'],
      [30, 'also we deploy on Fridays'],
      [55, 'and I play chess online'],
    ]);
    const messages = Array.from({ length: STEPS }, (_, step) => [
      { role: 'user', content: planted.get(step) ?? `step ${step}: please list the files again` },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${step}`, name: 'Bash', input: { command: 'ls' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `t${step}`, content: `file-${step} `.repeat(400) }],
      },
    ]).flat();
    writeFileSync(
      join(test.space.sessionsDir, 'tools.json'),
      JSON.stringify({
        id: 'tools',
        startedAt: '2026-11-20T10:00:00Z',
        endedAt: '2026-11-20T12:00:00Z',
        messages,
      }),
    );
    const consolidate = fastConsolidator(config, { now: () => RUN_NOW });
    const before = fake.server.requests.length;
    const first = await consolidate(test.space, FORCED_RUN);
    const firstRequests = fake.server.requests.slice(before);
    const read = (await readLedger(test.space.memoryDir)).sessions.tools?.messageCount ?? 0;
    expect(read).toBeGreaterThan(3 * 25);
    expect(read).toBeLessThan(3 * 40);
    expect(first.calls).toBeLessThanOrEqual(2);
    expect(firstRequests.some((request) => request.prompt.includes('step 40:'))).toBe(false);
    expect(first.reason).toMatch(/session tools part 1 of ~\d+/);

    for (let run = 0; run < 20; run += 1)
      if ((await consolidate(test.space, scheduled)).status !== 'completed') break;
    const ledger = await readLedger(test.space.memoryDir);
    expect(ledger.sessions.tools).toMatchObject({ messageCount: STEPS * 3 });
    const facts = await activeFacts(test);
    expect(facts.map((fact) => fact.title).sort()).toEqual([
      'Cat named Pixel',
      'Deploys on Fridays',
      'Plays chess online',
    ]);
    // Each part was sent once: no run read again what an earlier run consolidated.
    for (const line of planted.values()) {
      expect(fake.server.requests.filter((request) => request.prompt.includes(line))).toHaveLength(1);
    }
  });
});
