import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import type { RunRequest } from '../../src/core/run.js';
import { LockBusyError } from '../../src/errors.js';
import { listRuns, readLedger, readLock, type HeartbeatTimer } from '../../src/space/index.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { eventually } from '../support/eventually.js';
import { createTestSpace, snapshotDirectory, type TestSpace, fastConsolidator } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { activeFacts } from './helpers.js';

/**
 * Fencing of the space lock, end to end: a run whose heartbeat stopped (a paused VM) and whose lock was taken
 * over must not commit; a run that keeps beating keeps its lock however long it works. Time is a fake clock
 * the test moves; the paused run's heartbeat is a timer the test fires by hand (or withholds).
 */

const manual: RunRequest = { force: false, dryRun: false, trigger: 'manual' };
const STALE_MINUTES = 1;

const fake = useFakeAnthropic();

function fakeClock(): { now: () => Date; advance: (ms: number) => void } {
  let time = Date.parse('2026-11-29T12:00:00Z');
  return { now: () => new Date(time), advance: (ms) => (time += ms) };
}

function manualTimer(): { install: HeartbeatTimer; fire: () => Promise<void> } {
  let beat: (() => Promise<void>) | undefined;
  let stopped = false;
  return {
    install: (next) => {
      beat = next;
      stopped = false;
      return () => (stopped = true);
    },
    fire: async () => {
      if (!stopped) await beat?.();
    },
  };
}

function withStaleMinutes(config: Config, minutes: number): Config {
  return { ...config, limits: { ...config.limits, lockStaleMinutes: minutes } };
}

function consolidator(test: TestSpace, now: () => Date, lockTimer?: HeartbeatTimer) {
  return fastConsolidator(withStaleMinutes(test.config, STALE_MINUTES), {
    now,
    ...(lockTimer !== undefined ? { lockTimer } : {}),
  });
}

const extract = scriptedExtractor(EXAMPLE_FACTS);

describe('lock fencing in a run', () => {
  it('a paused run whose lock was taken over discards its plan and says so; the taker commits alone', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const clock = fakeClock();
    const pausedTimer = manualTimer();
    let takerSummary: Awaited<ReturnType<ReturnType<typeof consolidator>>> | undefined;
    let first = true;
    fake.server.setDefault(async (request) => {
      if (first) {
        first = false;
        // The first run is "paused" inside its model call: no heartbeat for longer than the stale time...
        clock.advance(STALE_MINUTES * 60_000 + 1);
        // ...and another run takes the stale lock over and consolidates the same sessions.
        takerSummary = await consolidator(test, clock.now)(test.space, manual);
      }
      return extract(request);
    });

    const paused = await consolidator(test, clock.now, pausedTimer.install)(test.space, manual);

    expect(takerSummary?.status).toBe('completed');
    expect(paused.status).toBe('lock-lost');
    expect(paused.reason).toMatch(/lost its lock because its heartbeat stopped.*nothing was written/);
    expect([paused.added, paused.updated, paused.diff]).toEqual([0, 0, '']);
    // Only the taker's run is in the history, and the ledger names it for every session.
    const runs = await listRuns(test.space.memoryDir);
    expect(runs.map((run) => run.runId)).toEqual([takerSummary?.runId]);
    const ledger = await readLedger(test.space.memoryDir);
    expect(Object.values(ledger.sessions).map((entry) => entry.runId)).toEqual(
      Array(takerSummary?.sessions.length).fill(takerSummary?.runId),
    );
    const titles = await activeFacts(test);
    expect(new Set(titles.map((fact) => fact.title)).size).toBe(titles.length);
    expect(
      [...snapshotDirectory(test.space.memoryDir).keys()].filter((file) => file.includes('staging')),
    ).toEqual([]);
    expect(await readLock(test.space.memoryDir)).toBeUndefined();
  });

  it('a slow run keeps its lock past the stale time while its heartbeat runs, and commits', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const clock = fakeClock();
    const timer = manualTimer();
    const refusals: unknown[] = [];
    let first = true;
    fake.server.setDefault(async (request) => {
      if (first) {
        first = false;
        // A model call ten stale times long, with the heartbeat beating every half stale time.
        for (let beat = 0; beat < 20; beat += 1) {
          clock.advance((STALE_MINUTES * 60_000) / 2);
          await timer.fire();
        }
        refusals.push(
          await consolidator(test, clock.now)(test.space, manual).catch((error: unknown) => error),
        );
      }
      return extract(request);
    });

    const slow = await consolidator(test, clock.now, timer.install)(test.space, manual);

    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toBeInstanceOf(LockBusyError);
    expect(slow.status).toBe('completed');
    expect((await listRuns(test.space.memoryDir)).map((run) => run.runId)).toEqual([slow.runId]);
  });

  it('renews the heartbeat on its own timer while a model call is outstanding', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const clock = fakeClock();
    let first = true;
    let refused: unknown;
    // A stale time of 60 ms gives a heartbeat every 15 ms (a quarter of it).
    const fast = (now: () => Date) => fastConsolidator(withStaleMinutes(test.config, 0.001), { now });
    fake.server.setDefault(async (request) => {
      if (first) {
        first = false;
        clock.advance(3_600_000);
        const expected = clock.now().toISOString();
        // Wait for the event: the run's own timer writes the new time as its heartbeat during this call.
        await eventually(
          async () => (await readLock(test.space.memoryDir))?.heartbeatAt === expected,
          10_000,
          'the heartbeat at the new time',
          5,
        );
        refused = await fast(clock.now)(test.space, manual).catch((error: unknown) => error);
      }
      return extract(request);
    });
    const summary = await fast(clock.now)(test.space, manual);
    expect(refused).toBeInstanceOf(LockBusyError);
    expect(summary.status).toBe('completed');
  });
});
