import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Config } from '../../src/config/schema.js';
import { redisUrlFor } from '../../src/daemon/redis.js';
import { uniquePrefix } from '../../harness/redis.js';
import {
  createFakeConsolidate,
  createFakeInspection,
  deferred,
  eventually,
  makeConfig,
  makeSpace,
  makeSummary,
} from './fakes.js';
import { FAST_TIMING, failOnLeftovers, openDaemon, openRedis, openRedisConfig } from './harness.js';

failOnLeftovers();

async function completedRuns(url: string, prefix: string): Promise<number> {
  const client = new Redis(url);
  try {
    return await client.zcard(`${prefix}:consolidation:completed`);
  } finally {
    client.disconnect();
  }
}

/**
 * A daemon on `config` with a fake consolidate and a fake inspection (the settled sessions of each space),
 * started.
 */
async function startFakeDaemon(config: Config, settled: Parameters<typeof createFakeInspection>[0]) {
  const inspection = createFakeInspection(settled);
  const fake = createFakeConsolidate();
  const daemon = openDaemon({ config, consolidate: fake.consolidate, inspectSpace: inspection.inspectSpace });
  await daemon.start();
  return { daemon, fake };
}

describe('daemon', () => {
  it('wires scheduler, workers and server: open gates lead to one run, visible over HTTP', async () => {
    const { redis, config } = await openRedisConfig('daemon', {
      spaces: [makeSpace('alpha'), makeSpace('beta')],
    });
    const { daemon, fake } = await startFakeDaemon(config, {
      alpha: { settledNew: 5 },
      beta: { settledNew: 4 },
    });
    expect(daemon.state).toBe('running');
    expect(daemon.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const report = await daemon.tick();
    expect(report.spaces.map((space) => space.outcome)).toEqual(['enqueued', 'gates-closed']);
    await fake.waitForCalls(1);
    await eventually(
      async () => (await completedRuns(redis.url, config.redisPrefix)) === 1,
      10_000,
      'one completed run',
    );

    const health = await fetch(`${daemon.address}/healthz`);
    expect(await health.json()).toEqual({
      ok: true,
      queue: 'redis',
      redis: 'up',
      workers: 'running',
      scheduler: 'started',
    });
    const metrics = await (await fetch(`${daemon.address}/metrics`)).text();
    expect(metrics).toContain('dreamd_facts_added_total{space="alpha"} 3');
    expect(metrics).toContain('dreamd_pending_sessions{space="beta"} 4');
    expect(metrics).toContain('bullmq_job_completed_total{queue="consolidation"} 1');
    const space = await (await fetch(`${daemon.address}/spaces/alpha`)).json();
    expect(space).toMatchObject({
      id: 'alpha',
      lastRun: { outcome: 'completed', trigger: 'schedule', summary: { added: 3 } },
    });

    await daemon.stop();
    expect(daemon.state).toBe('stopped');
    await redis.stop();
  });

  it('runs each space once with two daemons on one Redis', async () => {
    const redis = await openRedis();
    const spaces = ['a', 'b', 'c', 'd'].map(makeSpace);
    const config = makeConfig({ redisUrl: redis.url, redisPrefix: uniquePrefix('two'), spaces });
    const inspection = createFakeInspection(
      Object.fromEntries(spaces.map((space) => [space.id, { settledNew: 8 }])),
    );
    // Runs are held until both schedulers ticked twice, so every enqueue happens while the space's job exists.
    const release = deferred();
    const held =
      () =>
      async (call: { space: ReturnType<typeof makeSpace>; request: Parameters<typeof makeSummary>[1] }) => {
        await release.promise;
        return makeSummary(call.space, call.request);
      };
    const fakeA = createFakeConsolidate();
    const fakeB = createFakeConsolidate();
    for (let index = 0; index < 4; index++) {
      fakeA.script.push(held());
      fakeB.script.push(held());
    }
    const daemonA = openDaemon({
      config,
      consolidate: fakeA.consolidate,
      inspectSpace: inspection.inspectSpace,
      roles: { server: false },
    });
    const daemonB = openDaemon({
      config,
      consolidate: fakeB.consolidate,
      inspectSpace: inspection.inspectSpace,
      roles: { server: false },
    });
    await Promise.all([daemonA.start(), daemonB.start()]);

    // Concurrent ticks of one scheduler share one tick, so two rounds of one tick each.
    const reports = [
      ...(await Promise.all([daemonA.tick(), daemonB.tick()])),
      ...(await Promise.all([daemonB.tick(), daemonA.tick()])),
    ];
    const enqueued = reports.flatMap((report) =>
      report.spaces.filter((space) => space.outcome === 'enqueued'),
    );
    expect(enqueued.map((space) => space.spaceId).sort()).toEqual(['a', 'b', 'c', 'd']);
    release.resolve();
    await eventually(
      async () => (await completedRuns(redis.url, config.redisPrefix)) === 4,
      10_000,
      'four runs',
    );

    const ran = [...fakeA.calls, ...fakeB.calls].map((call) => call.space.id).sort();
    expect(ran).toEqual(['a', 'b', 'c', 'd']);

    await Promise.all([daemonA.stop(), daemonB.stop()]);
    await redis.stop();
  });

  it('adds a space on reload without a restart', async () => {
    const { redis, config } = await openRedisConfig('reload', {
      spaces: [makeSpace('alpha')],
    });
    const { daemon, fake } = await startFakeDaemon(config, { fresh: { settledNew: 5 } });

    expect((await fetch(`${daemon.address}/spaces/fresh`)).status).toBe(404);
    const next: Config = {
      ...config,
      spaces: [makeSpace('alpha'), makeSpace('fresh')],
      redisPrefix: 'ignored-on-reload',
    };
    daemon.reload(next);
    expect(daemon.config.redisPrefix).toBe(config.redisPrefix);
    expect((await fetch(`${daemon.address}/spaces/fresh`)).status).toBe(200);
    await daemon.tick();
    await fake.waitForCalls(1);
    expect(fake.calls[0]!.space.id).toBe('fresh');

    await daemon.stop();
    await redis.stop();
  });

  it('finishes the runs in progress when stopped under load', async () => {
    const redis = await openRedis();
    const spaces = ['a', 'b', 'c'].map(makeSpace);
    const config = makeConfig({
      redisUrl: redis.url,
      redisPrefix: uniquePrefix('load'),
      spaces,
      workers: { concurrency: 2 },
    });
    const inspection = createFakeInspection(
      Object.fromEntries(spaces.map((space) => [space.id, { settledNew: 5 }])),
    );
    const fake = createFakeConsolidate();
    const release = deferred();
    for (let index = 0; index < 3; index++) {
      fake.script.push(async (call) => {
        await release.promise;
        return makeSummary(call.space, call.request);
      });
    }
    const daemon = openDaemon({
      config,
      consolidate: fake.consolidate,
      inspectSpace: inspection.inspectSpace,
      workerTiming: { ...FAST_TIMING, shutdownTimeoutMs: 10_000 },
    });
    await daemon.start();
    await daemon.tick();
    await fake.waitForCalls(2);

    const stopped = daemon.stop();
    // The runs finish after the workers began to close (they take no new job then): the stop waits for them.
    await eventually(
      async () => (await daemon.health()).workers === 'stopping',
      5_000,
      'the workers to close',
    );
    release.resolve();
    await stopped;

    expect(fake.calls).toHaveLength(2);
    expect(await completedRuns(redis.url, config.redisPrefix)).toBe(2);
    const client = new Redis(redis.url);
    expect(await client.llen(`${config.redisPrefix}:consolidation:wait`)).toBe(1);
    client.disconnect();
    await redis.stop();
  });
});

describe('redisUrlFor', () => {
  it('uses REDIS_URL before the config, and gives none when neither is set', () => {
    const config = makeConfig({ redisUrl: 'redis://config:6379', redisPrefix: 'x' });
    expect(redisUrlFor(config, { REDIS_URL: 'redis://env:6379' })).toBe('redis://env:6379');
    expect(redisUrlFor(config, { REDIS_URL: '' })).toBe('redis://config:6379');
    expect(redisUrlFor({ ...config, redisUrl: undefined }, {})).toBeUndefined();
  });
});
