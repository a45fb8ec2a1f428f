import { afterEach } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import {
  connectionOptions,
  createConsolidationQueue,
  type ConsolidationQueue,
} from '../../src/daemon/queue.js';
import { createRedisProbe, type RedisProbe } from '../../src/daemon/redis-probe.js';
import {
  createWorkerPool,
  type CreateWorkerPoolOptions,
  type WorkerPool,
} from '../../src/daemon/worker-pool.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { createDaemon, type CreateDaemonOptions, type Daemon } from '../../src/daemon/daemon.js';
import { createDreamd } from '../../src/dreamd.js';
import type { RunRequest } from '../../src/core/run.js';
import { enqueueConsolidation, type EnqueueResult } from '../../src/daemon/queue.js';
import { uniquePrefix } from '../../harness/redis.js';
import { createFakeConsolidate, eventually, makeConfig, silentLogger } from './fakes.js';

interface Resource {
  readonly name: string;
  isOpen(): boolean;
  close(): Promise<void>;
}

const resources: Resource[] = [];

/** Registers something a test must close; the afterEach below fails the test if it is still open. */
export function track<T>(
  name: string,
  value: T,
  isOpen: (value: T) => boolean,
  close: (value: T) => Promise<void>,
): T {
  resources.push({ name, isOpen: () => isOpen(value), close: () => close(value) });
  return value;
}

/**
 * Installs the afterEach of graphile-worker's tests: a test that leaves a worker, queue, probe or redis-server
 * running fails (and the leftovers are closed so the next test starts clean).
 */
export function failOnLeftovers(): void {
  afterEach(async () => {
    const open = resources.filter((resource) => resource.isOpen());
    resources.length = 0;
    for (const resource of open.reverse()) await resource.close().catch(() => undefined);
    if (open.length > 0) {
      throw new Error(`left running after the test: ${open.map((resource) => resource.name).join(', ')}`);
    }
  });
}

export async function openRedis(): Promise<TestRedis> {
  const redis = await startRedis();
  return track(
    'redis-server',
    redis,
    (value) => value.running,
    (value) => value.stop(),
  );
}

export function openQueue(config: Config): ConsolidationQueue {
  const queue = createConsolidationQueue({
    connection: connectionOptions(config.redisUrl!),
    prefix: config.redisPrefix,
  });
  queue.on('error', () => undefined);
  return track(
    'queue',
    queue,
    (value) => value.closing === undefined,
    (value) => value.close(),
  );
}

export function openProbe(url: string): RedisProbe {
  let closed = false;
  const probe = createRedisProbe(url);
  const tracked: RedisProbe = {
    check: () => probe.check(),
    close: async () => {
      closed = true;
      await probe.close();
    },
  };
  return track(
    'redis probe',
    tracked,
    () => !closed,
    (value) => value.close(),
  );
}

export function openWorkerPool(
  options: Omit<CreateWorkerPoolOptions, 'connection' | 'probe' | 'logger'> & {
    logger?: CreateWorkerPoolOptions['logger'];
  },
): { pool: WorkerPool; probe: RedisProbe } {
  const url = options.config.redisUrl!;
  const probe = openProbe(url);
  const pool = createWorkerPool({
    logger: silentLogger,
    ...options,
    connection: connectionOptions(url),
    probe,
    timing: {
      lockDurationMs: 5_000,
      stalledIntervalMs: 1_000,
      healthCheckIntervalMs: 200,
      shutdownTimeoutMs: 2_000,
      abortGraceMs: 1_000,
      busyDelayMs: 200,
      ...options.timing,
    },
  });
  track(
    'worker pool',
    pool,
    (value) => value.state !== 'closed',
    (value) => value.close(),
  );
  return { pool, probe };
}

/** Worker timings of daemon tests: seconds where production waits minutes. */
export const FAST_TIMING = {
  healthCheckIntervalMs: 200,
  stalledIntervalMs: 1_000,
  lockDurationMs: 5_000,
  busyDelayMs: 200,
  unknownSpaceDelayMs: 100,
  shutdownTimeoutMs: 2_000,
  abortGraceMs: 500,
};

/**
 * A daemon tracked for the leftovers check, with fast timings, no tick at start and an empty environment (a
 * REDIS_URL of the machine running the tests must not win over the test's Redis). Silent unless given a logger.
 */
export function openDaemon(
  options: Omit<CreateDaemonOptions, 'logger'> & { logger?: CreateDaemonOptions['logger'] },
): Daemon {
  const daemon = createDaemon({
    env: {},
    logger: silentLogger,
    tickOnStart: false,
    workerTiming: FAST_TIMING,
    ...options,
  });
  return track(
    'daemon',
    daemon,
    (value) => value.state !== 'stopped' && value.state !== 'created',
    (value) => value.stop(),
  );
}

/**
 * One test's Redis (its own redis-server, tracked) and a config on it under a key prefix of its own (`name` and
 * a random suffix); `overrides` set the rest (spaces, workers).
 */
export async function openRedisConfig(
  name: string,
  overrides: Omit<Parameters<typeof makeConfig>[0], 'redisUrl' | 'redisPrefix'> = {},
): Promise<{ redis: TestRedis; config: Config }> {
  const redis = await openRedis();
  return {
    redis,
    config: makeConfig({ redisUrl: redis.url, redisPrefix: uniquePrefix(name), ...overrides }),
  };
}

/**
 * The daemon of a whole dreamd on `config` (its real consolidator and model), started: no tick at start, an
 * empty environment, silent, and tracked for the leftovers check.
 */
export async function startDreamdDaemon(
  config: Config,
): Promise<ReturnType<ReturnType<typeof createDreamd>['daemon']>> {
  const daemon = createDreamd({ getConfig: () => config, logger: silentLogger, env: {} }).daemon({
    tickOnStart: false,
  });
  track(
    'daemon',
    daemon,
    (value) => value.state !== 'stopped' && value.state !== 'created',
    (value) => value.stop(),
  );
  await daemon.start();
  return daemon;
}

/** Queues a run of `space` on `queue` as the API would (unless `request` says otherwise), at `now`. */
export function enqueueRun(
  queue: ConsolidationQueue,
  config: Config,
  space: string,
  request: Partial<RunRequest> = {},
  now: Date = new Date(),
): Promise<EnqueueResult> {
  return enqueueConsolidation(
    queue,
    space,
    { force: false, dryRun: false, trigger: 'api', ...request },
    { workers: config.workers, now },
  );
}

/** Waits until job `jobId` of `queue` is in `state` (see eventually); throws naming `what` after `timeoutMs`. */
export function jobReaches(
  queue: ConsolidationQueue,
  jobId: string,
  state: string,
  timeoutMs = 10_000,
  what = `the job to be ${state}`,
): Promise<void> {
  return eventually(async () => (await queue.getJobState(jobId)) === state, timeoutMs, what);
}

/**
 * One test's Redis (its own redis-server), config (its own key prefix), queue and fake consolidate. `enqueue` queues a run of a space (an API run unless the request
 * says otherwise), `reaches` waits until a job is in a state, `close` closes the parts given, then the queue and
 * Redis (the harness fails a test that leaves any open).
 */
export async function openQueueBench(
  name: string,
  overrides: Omit<Parameters<typeof makeConfig>[0], 'redisUrl' | 'redisPrefix'> = {},
  now: () => Date = () => new Date(),
) {
  const { redis, config } = await openRedisConfig(name, overrides);
  const queue = openQueue(config);
  const fake = createFakeConsolidate();
  return {
    redis,
    config,
    queue,
    fake,
    enqueue: (space = 'alpha', request: Partial<RunRequest> = {}) =>
      enqueueRun(queue, config, space, request, now()),
    reaches: (jobId: string, state: string) => jobReaches(queue, jobId, state),
    close: async (...parts: { close(): Promise<unknown> }[]) => {
      for (const part of parts) await part.close();
      await queue.close();
      await redis.stop();
    },
  };
}
