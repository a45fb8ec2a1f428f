import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { WaitingSession } from '../../src/core/run.js';
import { LOCK_FILE } from '../../src/space/paths.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { type CliRun } from '../support/cli.js';
import { EXAMPLE_FACTS, scriptedExtractor, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { snapshotDirectory, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { cliAt, exampleWorkspace, useFakeAnthropic } from '../support/fixtures.js';

/**
 * Every way a `dreamd consolidate` run can end without consolidating sessions that were due exits 3, names
 * each waiting session with its reason in the output (and in --json), and writes nothing it should not.
 */

const ALL_SEVEN = [
  '2026-11-02-lisbon-delivery',
  '2026-11-05-dinner-friday',
  '2026-11-09-coffee-usual',
  '2026-11-12-no-semicolons',
  '2026-11-16-postgres-migration',
  '2026-11-19-grafana-dashboard',
  '2026-11-26-moved-to-porto',
];

const fake = useFakeAnthropic();

function workspace(files?: readonly string[]): string {
  return exampleWorkspace(files, 'cli-endings');
}

function cli(root: string, argv: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return cliAt(root, fake.url, argv, env);
}

/** The waiting sessions of the one space's run, from `consolidate --json`. */
function waitingOf(run: CliRun): WaitingSession[] {
  const result = run.data<{ results: ConsolidateOutcome[] }>().results[0];
  if (result === undefined || !result.ok) throw new Error('the run did not go through');
  return [...(result.summary.unconsolidated ?? [])];
}

function sessionIds(waiting: readonly WaitingSession[]): string[] {
  return waiting.map((entry) => entry.sessionId).sort();
}

/** The waiting sessions `dreamd status --json` shows for the one space. */
async function statusWaiting(root: string): Promise<WaitingSession[]> {
  const status = await cli(root, ['status', '--json']);
  return [...(status.data<{ waiting: WaitingSession[] }[]>()[0]?.waiting ?? [])];
}

const memoryOf = (root: string): Map<string, string> => snapshotDirectory(join(root, 'memory'));

describe('consolidate endings that leave sessions waiting', () => {
  it('a model that stops at the output limit on every split: exit 3, each session named with output-limit', async () => {
    const root = workspace(ALL_SEVEN.slice(0, 2));
    fake.server.setDefault(faults.maxTokens());
    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(3);
    expect(run.stdout).not.toContain('no new messages in settled sessions');
    expect(run.stdout).toMatch(/nothing consolidated: 2 sessions wait for the next run \(output-limit\)/);
    for (const id of ALL_SEVEN.slice(0, 2))
      expect(run.stdout).toMatch(new RegExp(`waiting +${id}: output-limit, .*raise model\\.maxOutputTokens`));
    expect(run.stdout).toContain('exit 3');

    const json = await cli(root, ['consolidate', '--force', '--json']);
    expect(json.code).toBe(3);
    expect(sessionIds(waitingOf(json))).toEqual(ALL_SEVEN.slice(0, 2));
    expect(new Set(waitingOf(json).map((entry) => entry.reason))).toEqual(new Set(['output-limit']));
  });

  it('a model that refuses: exit 3, the sessions named with refusal, nothing written', async () => {
    const root = workspace();
    fake.server.setDefault(faults.refusal());
    const run = await cli(root, ['consolidate', '--force', '--json']);
    expect(run.code).toBe(3);
    const waiting = waitingOf(run);
    expect(sessionIds(waiting)).toEqual(ALL_SEVEN);
    expect(waiting.every((entry) => entry.reason === 'refusal')).toBe(true);
    expect(waiting[0]?.detail).toMatch(/refused to answer/);
    expect([...memoryOf(root).keys()].filter((file) => !file.startsWith('.dreamd'))).toEqual([]);

    const text = await cli(root, ['consolidate', '--force']);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/waiting +2026-11-02-lisbon-delivery: refusal, .*refused to answer/);

    // status shows them too, until a run consolidates them.
    expect(sessionIds(await statusWaiting(root))).toEqual(ALL_SEVEN);
    const status = await cli(root, ['status']);
    expect(status.stdout).toMatch(/waiting +2026-11-05-dinner-friday: refusal, /);
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    expect((await cli(root, ['consolidate', '--force'])).code).toBe(0);
    expect(await statusWaiting(root)).toEqual([]);
  });

  it('an answer over limits.maxAnswerChars is dropped unread: exit 3, its sessions wait with answer-dropped', async () => {
    const root = workspace(ALL_SEVEN.slice(0, 3));
    const flood = 'x'.repeat(1_200_000);
    fake.server.setDefault((request) => ({
      json: {
        facts: [
          {
            type: 'user',
            title: 'Flood',
            body: flood,
            why: null,
            howToApply: null,
            observed: '2026-11-20',
            sources: sessionsInPrompt(request.prompt).map((session) => session.id),
            replaces: [],
            confidence: null,
            evidence: 'user',
          },
        ],
      },
    }));
    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(
      /waiting +2026-11-02-lisbon-delivery: answer-dropped, the answer was 1,2\d\d,\d{3} characters, over limits\.maxAnswerChars \(1,000,000\)/,
    );
    expect(run.stdout).toMatch(/nothing consolidated: 3 sessions wait for the next run \(answer-dropped\)/);
    expect(fake.server.requests).toHaveLength(1); // never retried: the same request would flood again
  });

  it('a run whose lock is taken over while the model answers: exit 3, every session named with lock-lost', async () => {
    const root = workspace(ALL_SEVEN.slice(0, 2));
    const extract = scriptedExtractor(EXAMPLE_FACTS);
    fake.server.setDefault((request) => {
      // Another process took the lock over while this run waited for the model.
      writeFileSync(
        join(root, 'memory', LOCK_FILE),
        JSON.stringify({
          owner: 'dreamd 4242@elsewhere',
          pid: 4242,
          host: 'elsewhere',
          startedAt: new Date().toISOString(),
          token: 'taken-over',
        }),
      );
      return extract(request);
    });
    const run = await cli(root, ['consolidate', '--force', '--json']);
    expect(run.code).toBe(3);
    const waiting = waitingOf(run);
    expect(sessionIds(waiting)).toEqual(ALL_SEVEN.slice(0, 2));
    expect(waiting.every((entry) => entry.reason === 'lock-lost')).toBe(true);
    expect([...memoryOf(root).keys()].filter((file) => !file.startsWith('.dreamd'))).toEqual([]);
  });

  it('a space over its monthly budget: exit 3, the settled sessions named with monthly-budget', async () => {
    const root = workspace(ALL_SEVEN.slice(0, 4));
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const budget = { DREAMD_MONTHLY_BUDGET_USD: '0.000001' };
    const first = await cli(root, ['consolidate', '--force'], budget);
    expect(first.code).toBe(0);
    cpSync(
      join(EXAMPLE_SESSIONS_DIR, `${ALL_SEVEN[4]!}.json`),
      join(root, 'sessions', `${ALL_SEVEN[4]!}.json`),
    );
    const before = memoryOf(root);
    const run = await cli(root, ['consolidate', '--force'], budget);
    before.set('.dreamd/waiting.json', memoryOf(root).get('.dreamd/waiting.json') ?? '(absent)');
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/skipped, monthly budget reached/);
    expect(run.stdout).toMatch(
      new RegExp(`waiting +${ALL_SEVEN[4]!}: monthly-budget, monthly budget reached`),
    );
    expect(memoryOf(root)).toEqual(before);
    expect(await statusWaiting(root)).toEqual([
      expect.objectContaining({ sessionId: ALL_SEVEN[4], reason: 'monthly-budget' }),
    ]);
  });

  it('a run that consolidates everything due still exits 0', async () => {
    const root = workspace(ALL_SEVEN.slice(0, 2));
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('waiting');
  });
});
