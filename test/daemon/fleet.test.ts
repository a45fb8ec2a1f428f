/**
 * Redis mode shared by a fleet, on a real redis-server: daemons of different configurations on one Redis and
 * prefix never fail each other's jobs, and the health check, the API and the log tell the truth while Redis
 * refuses writes (read-only replica, out of memory).
 */
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { uniquePrefix } from '../../harness/redis.js';
import type { Config } from '../../src/config/schema.js';
import type { InspectSpaceFunction } from '../../src/core/inspection.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import {
  createFakeConsolidate,
  createFakeInspection,
  eventually,
  makeConfig,
  makeSpace,
  type FakeConsolidate,
} from './fakes.js';
import { enqueueRun, failOnLeftovers, openDaemon, openQueue, openRedis, openRedisConfig } from './harness.js';

failOnLeftovers();

/** A logger whose lines (parsed) a test can read. */
function capturingLogger(): { logger: pino.Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
      }
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

/** A daemon of `config` without an HTTP server, whose runs its own fake consolidate records, logging to `logger`. */
function fleetMember(
  config: Config,
  inspectSpace: InspectSpaceFunction,
  logger: pino.Logger,
): { daemon: Daemon; fake: FakeConsolidate } {
  const fake = createFakeConsolidate();
  const daemon = openDaemon({
    config,
    consolidate: fake.consolidate,
    inspectSpace,
    roles: { server: false },
    logger,
  });
  return { daemon, fake };
}

async function withClient<T>(url: string, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url);
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

describe('two daemons of different configurations on one Redis and prefix', () => {
  it("runs each space on the daemon that serves it, fails none of the other's jobs, and warns at start", async () => {
    const redis = await openRedis();
    const prefix = uniquePrefix('fleet');
    const spacesA = ['a1', 'a2', 'a3'].map(makeSpace);
    const spacesB = ['b1', 'b2', 'b3'].map(makeSpace);
    const inspection = createFakeInspection(
      Object.fromEntries([...spacesA, ...spacesB].map((space) => [space.id, { settledNew: 6 }])),
    );
    const logA = capturingLogger();
    const logB = capturingLogger();
    const { daemon: daemonA, fake: fakeA } = fleetMember(
      makeConfig({ redisUrl: redis.url, redisPrefix: prefix, spaces: spacesA }),
      inspection.inspectSpace,
      logA.logger,
    );
    const { daemon: daemonB, fake: fakeB } = fleetMember(
      makeConfig({ redisUrl: redis.url, redisPrefix: prefix, spaces: spacesB }),
      inspection.inspectSpace,
      logB.logger,
    );
    // B alone at first: the jobs of A's spaces reach only B's workers, which must hand them back, not fail them.
    await daemonB.start();
    const configA = daemonA.config;
    const queue = openQueue(configA);
    for (const space of spacesA) await enqueueRun(queue, configA, space.id, { trigger: 'schedule' });
    await eventually(
      () => Promise.resolve(logB.lines.some((line) => /does not serve; handing it back/.test(line.msg))),
      10_000,
      "B handing back A's jobs",
    );
    await queue.close();
    await daemonA.start();
    // The second to start sees the first, with the fix.
    expect(logA.lines.map((line) => line.msg).join('\n')).toMatch(/serves other spaces.*redisPrefix/);

    await daemonB.tick();
    await eventually(
      () => Promise.resolve(fakeA.calls.length + fakeB.calls.length === 6),
      15_000,
      'six runs',
    );
    expect(fakeA.calls.map((call) => call.space.id).sort()).toEqual(['a1', 'a2', 'a3']);
    expect(fakeB.calls.map((call) => call.space.id).sort()).toEqual(['b1', 'b2', 'b3']);
    await eventually(
      () =>
        withClient(
          redis.url,
          async (client) => (await client.zcard(`${prefix}:consolidation:completed`)) === 6,
        ),
      10_000,
      'six completed jobs',
    );
    const failed = await withClient(redis.url, (client) => client.zcard(`${prefix}:consolidation:failed`));
    expect(failed).toBe(0);

    await Promise.all([daemonA.stop(), daemonB.stop()]);
    // Each daemon left the registry at stop.
    expect(await withClient(redis.url, (client) => client.hlen(`${prefix}:daemons`))).toBe(0);
    await redis.stop();
  });

  it('does not warn about daemons of the same configuration', async () => {
    const { redis, config } = await openRedisConfig('same', {
      spaces: [makeSpace('x')],
    });
    const inspection = createFakeInspection({ x: { settledNew: 0 } });
    const log = capturingLogger();
    const first = fleetMember(config, inspection.inspectSpace, log.logger).daemon;
    const second = fleetMember(config, inspection.inspectSpace, log.logger).daemon;
    await first.start();
    await second.start();
    expect(await withClient(redis.url, (client) => client.hlen(`${config.redisPrefix}:daemons`))).toBe(2);
    expect(log.lines.filter((line) => /serves other spaces/.test(line.msg))).toEqual([]);
    await Promise.all([first.stop(), second.stop()]);
    await redis.stop();
  });
});

describe('a Redis that answers but refuses writes', () => {
  async function startWatched() {
    const { redis, config } = await openRedisConfig('ro', {
      spaces: [makeSpace('alpha')],
    });
    const log = capturingLogger();
    const daemon = openDaemon({
      config,
      consolidate: createFakeConsolidate().consolidate,
      inspectSpace: createFakeInspection({ alpha: { settledNew: 0 } }).inspectSpace,
      logger: log.logger,
    });
    await daemon.start();
    const health = async () => {
      const response = await fetch(`${daemon.address}/healthz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    return { redis, daemon, log, health };
  }

  it('is not healthy while it is a read-only replica, answers the API with 503 and the reason, and is healthy after', async () => {
    const { redis, daemon, log, health } = await startWatched();
    expect((await health()).body).toMatchObject({ ok: true, redis: 'up' });

    // A replica of a primary that is not there: it answers reads and refuses every write with READONLY.
    await withClient(redis.url, (client) => client.call('REPLICAOF', '127.0.0.1', '1'));
    const during = await health();
    expect(during.status).toBe(503);
    expect(during.body).toMatchObject({ ok: false, redis: 'refuses-writes' });
    expect(String(during.body.reason)).toMatch(/read-only replica.*primary/);
    const metrics = await (await fetch(`${daemon.address}/metrics`)).text();
    expect(metrics).toContain('dreamd_redis_state{state="refuses-writes"} 1');

    const queued = await fetch(`${daemon.address}/spaces/alpha/consolidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(queued.status).toBe(503);
    expect(((await queued.json()) as { error: string }).error).toMatch(
      /cannot take jobs now: Redis is a read-only replica/,
    );

    // An outage in which the workers are refused dozens of times (Redis counts each READONLY answer): the log
    // says so a few times, not once per refusal.
    const refused = async (): Promise<number> => {
      const stats = await withClient(redis.url, (client) => client.info('errorstats'));
      return Number(/errorstat_READONLY:count=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    const before = await refused();
    await eventually(async () => (await refused()) - before >= 40, 20_000, '40 writes refused', 100);
    await withClient(redis.url, (client) => client.call('REPLICAOF', 'NO', 'ONE'));
    await eventually(async () => (await health()).body.ok === true, 10_000, 'healthy again');
    expect((await health()).body).toMatchObject({ ok: true, redis: 'up' });

    const warnings = log.lines.filter((line) => line.level >= 40);
    expect(warnings.length).toBeLessThanOrEqual(6);
    expect(warnings.map((line) => line.msg).join('\n')).toMatch(/Redis refuses writes/);
    await daemon.stop();
    await redis.stop();
  });

  it('is not healthy while it is out of memory under noeviction, and is healthy after', async () => {
    const { redis, daemon, health } = await startWatched();
    await withClient(redis.url, async (client) => {
      await client.config('SET', 'maxmemory-policy', 'noeviction');
      await client.config('SET', 'maxmemory', '1'); // any write is now over the limit
    });
    const during = await health();
    expect(during.status).toBe(503);
    expect(during.body).toMatchObject({ ok: false, redis: 'refuses-writes' });
    expect(String(during.body.reason)).toMatch(/out of memory.*maxmemory/);
    await withClient(redis.url, (client) => client.config('SET', 'maxmemory', '0'));
    expect((await health()).body).toMatchObject({ ok: true, redis: 'up' });
    await daemon.stop();
    await redis.stop();
  });
});
