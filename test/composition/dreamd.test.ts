import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { createDreamd } from '../../src/dreamd.js';
import { ModelError } from '../../src/errors.js';
import { listRuns } from '../../src/space/index.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { startRedis, uniquePrefix, type TestRedis } from '../../harness/redis.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { aRunRecord, later, withDaemon } from './helpers.js';

/** Three of the example sessions: two fewer than the default `gates.minSessions` of 5. */
const THREE = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
];

/** A pino logger whose lines are kept, to read what a run logged. */
function recordingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const fake = useFakeAnthropic();
let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.stop();
  redis = undefined;
});

describe('createDreamd', () => {
  it('reads the live config at every run: a reload that lowers minSessions reaches the next run', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: THREE });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const { logger } = recordingLogger();
    const dreamd = createDreamd({ getConfig: () => test.config, logger, now: later });
    const daemon = dreamd.daemon();

    const before = await dreamd.consolidate(test.space, { force: false, dryRun: false, trigger: 'schedule' });
    expect(before.status).toBe('skipped');
    expect(before.reason).toContain('3 settled new sessions; 5 needed');

    const lowered: Config = { ...test.config, gates: { ...test.config.gates, minSessions: 3 } };
    daemon.reload(lowered);
    expect(dreamd.config().gates.minSessions).toBe(3);
    const after = await dreamd.consolidate(test.space, { force: false, dryRun: false, trigger: 'schedule' });
    expect(after.status).toBe('completed');
    expect(after.sessions).toHaveLength(3);
    expect(fake.server.requests.length).toBeGreaterThan(0);
  });

  it('runs the reloaded gates in a started daemon: the job its tick queues consolidates with the real model', async () => {
    redis = await startRedis();
    const test = createTestSpace({ modelUrl: fake.url, examples: THREE });
    const config: Config = { ...test.config, redisUrl: redis.url, redisPrefix: uniquePrefix('dreamd') };
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const { logger, lines } = recordingLogger();
    await withDaemon(config, logger, async (daemon) => {
      const closed = await daemon.tick();
      expect(closed.spaces.map((space) => space.outcome)).toEqual(['gates-closed']);
      daemon.reload({ ...config, gates: { ...config.gates, minSessions: 3 } });
      const open = await daemon.tick();
      expect(open.spaces.map((space) => space.outcome)).toEqual(['enqueued']);
      // The worker's run commits a run record; wait for it (the test's timeout bounds the wait).
      await aRunRecord(test.space.memoryDir);
      const runs = await listRuns(test.space.memoryDir);
      expect(runs).toHaveLength(1);
      expect(runs[0]!.summary.sessions).toHaveLength(3);
      expect(lines.some((line) => line.msg === 'gates open')).toBe(true);
    });
  });

  it('logs every model retry to its logger and counts them in the run record', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: THREE,
      env: { DREAMD_MIN_SESSIONS: '1' },
    });
    fake.server.enqueue(faults.overloaded(), faults.overloaded());
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const { logger, lines } = recordingLogger();
    const dreamd = createDreamd({
      getConfig: () => test.config,
      logger,
      now: later,
      modelOptions: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 },
    });
    const summary = await dreamd.consolidate(test.space, { force: true, dryRun: false, trigger: 'manual' });

    expect(summary.status).toBe('completed');
    expect(fake.server.requests).toHaveLength(summary.calls + 2);
    expect(summary.retries).toBe(2);
    const retried = lines.filter((line) => String(line.msg).startsWith('model call failed, retrying'));
    expect(retried.map((line) => line.attempt)).toEqual([1, 2]);
    const [record] = await listRuns(test.space.memoryDir);
    expect(record!.summary.retries).toBe(2);
  });

  it('creates the model again when the reloaded config changes it, and fails with missing-credentials when the key is missing', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: THREE });
    let config: Config = test.config;
    const dreamd = createDreamd({ getConfig: () => config, logger: recordingLogger().logger });
    const first = dreamd.model();
    expect(dreamd.model()).toBe(first);
    config = { ...config, model: { ...config.model, name: 'claude-other-model' } };
    expect(dreamd.model()).not.toBe(first);
    expect(dreamd.model().label).toContain('claude-other-model');
    config = { ...config, model: { ...config.model, apiKey: undefined, baseUrl: undefined } };
    expect(() => dreamd.model()).toThrow(ModelError);
  });

  it('finishes a commit an earlier process left half done before anything reads the folder (recoverSpaces)', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: THREE });
    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const crash = new Error('killed between the renames');
    const crashing = createDreamd({
      getConfig: () => test.config,
      logger: recordingLogger().logger,
      now: later,
      faultInjection: (step) => {
        if (step === 'commit:apply:0') throw crash;
      },
    });
    await expect(
      crashing.consolidate(test.space, { force: true, dryRun: false, trigger: 'manual' }),
    ).rejects.toThrow(/killed between the renames/);
    expect(await listRuns(test.space.memoryDir)).toHaveLength(0);

    const { logger, lines } = recordingLogger();
    const dreamd = createDreamd({ getConfig: () => test.config, logger, now: later });
    const [result] = await dreamd.recoverSpaces();
    expect(result).toMatchObject({ spaceId: test.space.id, outcome: { status: 'recovered' } });
    expect(lines.some((line) => line.msg === 'finished an interrupted commit')).toBe(true);
    expect(await listRuns(test.space.memoryDir)).toHaveLength(1);
    expect((await dreamd.recoverSpaces())[0]!.outcome).toEqual({ status: 'clean' });
  });
});
