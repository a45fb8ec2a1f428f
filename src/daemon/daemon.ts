import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ConsolidateFunction } from '../core/run.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import { ConfigError } from '../errors.js';
import type { EmbeddedQueue } from './embedded-queue.js';
import type { JobQueue } from './jobs.js';
import type { Fleet } from './fleet.js';
import { createRepeatedLog } from './repeated-log.js';
import type { DaemonMetrics } from './metrics.js';
import type { ConsolidationQueue } from './queue.js';
import { redisUrlFor } from './redis.js';
import type { RedisProbe } from './redis-probe.js';
import type { Scheduler, TickReport } from './scheduler.js';
import type { DaemonServer, HealthReport } from './server.js';
import type { WorkerPool, WorkerTiming } from './worker-pool.js';

/** Which parts this process runs: `dreamd start` all three, `dreamd worker` workers, `dreamd scheduler` the tick. */
export interface DaemonRoles {
  readonly scheduler: boolean;
  readonly workers: boolean;
  readonly server: boolean;
}

export interface CreateDaemonOptions {
  readonly config: Config;
  readonly consolidate: ConsolidateFunction;
  readonly inspectSpace: InspectSpaceFunction;
  readonly logger: Logger;
  /** Default: all three. */
  readonly roles?: Partial<DaemonRoles>;
  /** The clock of the scheduler and the API; default the system clock. */
  readonly now?: () => Date;
  /** Environment (REDIS_URL, PATH for redis-server); default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Worker timings (lock duration, stalled interval, shutdown timeout …); defaults in worker-pool.ts. */
  readonly workerTiming?: Partial<WorkerTiming>;
  /**
   * Run a scheduler tick as soon as the daemon starts, rather than waiting up to one period. Default true: gates
   * are state, so a daemon that was down catches up at once.
   */
  readonly tickOnStart?: boolean;
  /**
   * The config with the spaces `discover` finds added, called when the daemon starts and before every tick (a
   * process without the scheduler role: every `DISCOVER_EVERY_MS`), so a repository or session an agent adds
   * appears without a restart. Default: discovery (`discovery/`) with a cache kept for the daemon's life, so a
   * transcript's head is read once.
   */
  readonly discover?: (config: Config) => Promise<Config>;
}

/** How often a process without the scheduler role (`dreamd worker`) looks for new repositories: 1 minute. */
export const DISCOVER_EVERY_MS = 60_000;

/** The spaces of two configs are the same: ids, folders, sources (discovered files included). */
function sameSpaces(left: Config, right: Config): boolean {
  return JSON.stringify(left.spaces) === JSON.stringify(right.spaces);
}

export type DaemonState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

export interface Daemon {
  readonly state: DaemonState;
  /** The config in effect (changes on reload). */
  readonly config: Config;
  /** The Redis in use, once started; undefined with the embedded queue. */
  readonly redisUrl: string | undefined;
  /** `redis` (BullMQ) or `embedded` (in-process, no Redis), once started. */
  readonly queueKind: 'redis' | 'embedded' | undefined;
  /** The HTTP server (for `inject` in tests), once started with the server role. */
  readonly server: DaemonServer | undefined;
  /** The address the HTTP server listens on, once started with the server role. */
  readonly address: string | undefined;
  start(): Promise<void>;
  /** Graceful: stops the API and the tick, lets workers finish or hand back their jobs, stops a private Redis. */
  stop(): Promise<void>;
  /**
   * Takes a new config without a restart: spaces added or removed, gates, schedule, concurrency, retries.
   * Redis, key prefix, state directory and server settings need a restart; a change to them is logged and ignored.
   */
  reload(config: Config): void;
  /** One scheduler tick now (the scheduler role only). */
  tick(): Promise<TickReport>;
  health(): Promise<HealthReport>;
}

interface Parts {
  redisUrl: string;
  fleet: Fleet;
  probe: RedisProbe;
  queue: ConsolidationQueue;
  embedded: EmbeddedQueue;
  jobs: JobQueue;
  metrics: DaemonMetrics;
  pool: WorkerPool | undefined;
  scheduler: Scheduler | undefined;
  server: DaemonServer | undefined;
  address: string | undefined;
}

/**
 * The one place that wires dreamd's daemon: Redis, the queue, metrics, the worker pool, the scheduler and the HTTP
 * server, from a parsed config.
 *
 * States: created → starting → running → stopping → stopped. A failed start stops what it had started and returns
 * to `stopped`. `stop()` is idempotent; `reload()` applies while running and before start.
 */
export function createDaemon(options: CreateDaemonOptions): Daemon {
  const roles: DaemonRoles = { scheduler: true, workers: true, server: true, ...options.roles };
  const now = options.now ?? (() => new Date());
  const logger = options.logger;
  /** The config as given (reloads replace it); `config` is it with the discovered spaces. */
  let given = options.config;
  let config = options.config;
  let discoverTimer: NodeJS.Timeout | undefined;
  let discoverWith = options.discover;
  const discover = async (base: Config): Promise<Config> => {
    if (base.discover === undefined) return base;
    if (discoverWith === undefined) {
      const { createDiscoveryCache, withDiscoveredSpaces } = await import('../discovery/index.js');
      const cache = createDiscoveryCache();
      discoverWith = (next) => withDiscoveredSpaces(next, cache);
    }
    return discoverWith(base);
  };
  let state: DaemonState = 'created';
  let parts: Partial<Parts> = {};
  let stopping: Promise<void> | undefined;

  const health = async (): Promise<HealthReport> => {
    const scheduler = parts.scheduler === undefined ? 'absent' : parts.scheduler.state;
    const embedded = parts.embedded;
    if (embedded !== undefined) {
      const workers = embedded.isRunning() ? 'running' : 'stopped';
      return { ok: workers === 'running', queue: 'embedded', redis: 'absent', workers, scheduler };
    }
    const probe = parts.probe;
    const checked = probe === undefined ? undefined : await probe.check();
    const pool = parts.pool;
    const workers =
      pool === undefined
        ? 'absent'
        : pool.state === 'closing'
          ? 'stopping'
          : pool.isRunning()
            ? 'running'
            : 'stopped';
    if (checked === undefined || !checked.up) {
      const reason = checked === undefined ? 'not connected' : `Redis unreachable: ${checked.error}`;
      return { ok: false, queue: 'redis', redis: 'down', reason, workers, scheduler };
    }
    if (!checked.writable) {
      return {
        ok: false,
        queue: 'redis',
        redis: 'refuses-writes',
        reason: checked.reason,
        workers,
        scheduler,
      };
    }
    return { ok: workers !== 'stopped', queue: 'redis', redis: 'up', workers, scheduler };
  };

  /** Puts a config in effect; the settings that need a restart keep their old values. */
  const apply = (next: Config, message: string): void => {
    const applied: Config = {
      ...next,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      stateDir: config.stateDir,
      server: config.server,
    };
    parts.scheduler?.reload(applied); // throws on a bad schedule before anything changed
    config = applied;
    parts.pool?.reload(applied);
    parts.embedded?.reload(applied);
    parts.metrics?.retainSpaces(applied.spaces.map((space) => space.id));
    logger.info({ spaces: applied.spaces.map((space) => space.id) }, message);
  };

  /** Discovers again; puts the spaces in effect when they changed. A failure is logged, the old spaces kept. */
  const refreshSpaces = async (): Promise<void> => {
    if (given.discover === undefined) return;
    try {
      const next = await discover(given);
      if (!sameSpaces(next, config)) apply(next, 'discovered spaces changed');
    } catch (error) {
      logger.warn({ err: error }, 'discovery failed; the spaces found before stay in effect');
    }
  };

  const stopParts = async (): Promise<void> => {
    if (discoverTimer !== undefined) clearInterval(discoverTimer);
    discoverTimer = undefined;
    const { server, scheduler, pool, embedded, queue, probe, fleet } = parts;
    const step = async (name: string, action: (() => Promise<void>) | undefined): Promise<void> => {
      if (action === undefined) return;
      try {
        await action();
      } catch (error) {
        logger.warn({ err: error }, `stopping ${name} failed`);
      }
    };
    await step('server', server && (() => server.close()));
    await step('scheduler', scheduler && (() => scheduler.stop()));
    await step('workers', pool && (() => pool.close()));
    await step('embedded queue', embedded && (() => embedded.close()));
    await step('fleet entry', fleet && (() => fleet.leave()));
    await step('queue', queue && (() => queue.close()));
    await step('redis probe', probe && (() => probe.close()));
    parts = {};
  };

  // After a run, the pending-sessions gauge of its space is read again instead of waiting for the next tick.
  const refreshPending = (spaceId: string): void => {
    const space = config.spaces.find((candidate) => candidate.id === spaceId);
    if (space === undefined) return;
    options
      .inspectSpace(space)
      .then((inspection) => parts.metrics?.setPendingSessions(spaceId, inspection.settledNew))
      .catch((error: unknown) => logger.debug({ err: error, spaceId }, 'could not count pending sessions'));
  };

  const start = async (): Promise<void> => {
    if (state !== 'created' && state !== 'stopped') throw new Error(`cannot start a daemon that is ${state}`);
    state = 'starting';
    try {
      await refreshSpaces();
      const {
        Redis,
        assertPortFree,
        bullmqJobs,
        connectionOptions,
        createConsolidationQueue,
        createEmbeddedQueue,
        createFleet,
        createMetrics,
        createRedisProbe,
        createScheduler,
        createServer,
        createWorkerPool,
      } = await import('./daemon-parts.js');
      if (roles.server) await assertPortFree(config.server.host, config.server.port);
      const redisUrl = redisUrlFor(config, options.env ?? process.env);
      let jobs: JobQueue;
      let metrics: DaemonMetrics;
      if (redisUrl === undefined) {
        if (!roles.workers || !roles.scheduler) {
          throw new ConfigError(
            `${roles.workers ? '`dreamd worker`' : '`dreamd scheduler`'} runs apart from the other half and ` +
              'shares jobs through Redis: set REDIS_URL (or "redisUrl" in the config). Without Redis, ' +
              '`dreamd start` runs scheduler, workers and API in one process.',
            'redisUrl',
          );
        }
        const timing = options.workerTiming;
        const embedded = createEmbeddedQueue({
          getConfig: () => config,
          consolidate: options.consolidate,
          logger,
          timing: {
            ...(timing?.busyDelayMs !== undefined ? { busyDelayMs: timing.busyDelayMs } : {}),
            ...(timing?.shutdownTimeoutMs !== undefined
              ? { shutdownTimeoutMs: timing.shutdownTimeoutMs }
              : {}),
          },
          onCompleted: (summary) => {
            parts.metrics?.recordRun(summary);
            refreshPending(summary.spaceId);
          },
          onFailed: (_error, spaceId) => parts.metrics?.recordFailure(spaceId),
        });
        parts.embedded = embedded;
        jobs = embedded;
        metrics = createMetrics(embedded);
      } else {
        parts.redisUrl = redisUrl;
        const connection = connectionOptions(redisUrl);
        parts.probe = createRedisProbe(redisUrl, {
          key: `${config.redisPrefix}:probe:${hostname()}:${process.pid}`,
        });
        const queue = createConsolidationQueue({ connection, prefix: config.redisPrefix });
        const queueErrors = createRepeatedLog(logger, 'queue error');
        queue.on('error', (error) => queueErrors.report(error));
        parts.queue = queue;
        await queue.waitUntilReady();
        // Its own small connection: BullMQ 6 does not expose the queue's.
        const fleetClient = new Redis(redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 2_000 });
        fleetClient.on('error', () => undefined); // the probe and the workers report Redis being away
        const fleet = createFleet({
          store: () => Promise.resolve(fleetClient),
          onLeft: () => fleetClient.disconnect(),
          prefix: config.redisPrefix,
          spaces: () => config.spaces.map((space) => space.id),
          logger,
        });
        parts.fleet = fleet;
        // A warning, never a refusal: a fleet being reconfigured passes through mixed configs on purpose.
        await fleet
          .announce()
          .catch((error: unknown) => logger.warn({ err: error }, 'could not announce this daemon on Redis'));
        jobs = bullmqJobs(queue);
        const probe = parts.probe;
        metrics = createMetrics(jobs, queue, async () => {
          const checked = await probe.check();
          return !checked.up ? 'down' : checked.writable ? 'up' : 'refuses-writes';
        });
        if (roles.workers) {
          parts.pool = createWorkerPool({
            config,
            connection,
            consolidate: options.consolidate,
            probe: parts.probe,
            logger,
            ...(options.workerTiming !== undefined ? { timing: options.workerTiming } : {}),
            hooks: {
              onCompleted: (summary) => {
                metrics.recordRun(summary);
                refreshPending(summary.spaceId);
              },
              onFailed: (_error, job) => metrics.recordFailure(job?.data.spaceId),
            },
          });
        }
      }
      parts.jobs = jobs;
      parts.metrics = metrics;

      if (roles.scheduler) {
        const scheduler = createScheduler({
          config,
          jobs,
          inspectSpace: options.inspectSpace,
          now,
          logger,
          beforeTick: refreshSpaces,
          onInspected: (inspection) => metrics.setPendingSessions(inspection.spaceId, inspection.settledNew),
        });
        parts.scheduler = scheduler;
        scheduler.start();
        if (options.tickOnStart ?? true) {
          scheduler.tick().catch((error: unknown) => logger.error({ err: error }, 'first tick failed'));
        }
      }
      if (roles.server) {
        const server = await createServer({
          getConfig: () => config,
          jobs,
          dashboardQueue: parts.queue,
          inspectSpace: options.inspectSpace,
          metrics,
          health,
          now,
          logger,
        });
        parts.server = server;
        parts.address = await server.listen();
      }
      // No log line here: the process that started the daemon logs the one start line, with what only it
      // knows (the model in use); a library user's start is theirs to report.
      if (!roles.scheduler && given.discover !== undefined) {
        discoverTimer = setInterval(() => void refreshSpaces(), DISCOVER_EVERY_MS);
        discoverTimer.unref();
      }
      state = 'running';
    } catch (error) {
      await stopParts();
      state = 'stopped';
      throw error;
    }
  };

  return {
    get state() {
      return state;
    },
    get config() {
      return config;
    },
    get redisUrl() {
      return parts.redisUrl;
    },
    get queueKind() {
      return parts.jobs?.kind;
    },
    get server() {
      return parts.server;
    },
    get address() {
      return parts.address;
    },
    start,
    stop() {
      if (state === 'created' || state === 'stopped') return Promise.resolve();
      stopping ??= (async () => {
        state = 'stopping';
        logger.info('dreamd daemon stopping');
        await stopParts();
        state = 'stopped';
        stopping = undefined;
      })();
      return stopping;
    },
    reload(next) {
      given = next;
      const fixed: string[] = (['redisUrl', 'redisPrefix', 'stateDir'] as const).filter(
        (key) => next[key] !== config[key],
      );
      if (next.server.host !== config.server.host) fixed.push('server.host');
      if (next.server.port !== config.server.port) fixed.push('server.port');
      if (next.server.apiToken !== config.server.apiToken) fixed.push('server.apiToken');
      if (fixed.length > 0)
        logger.warn({ fields: fixed }, 'these settings change only on restart; kept the old values');
      // The spaces discovered so far stay until the next discovery (a run of one is not handed back meanwhile).
      const discovered =
        next.discover === undefined ? [] : config.spaces.filter((space) => space.repository !== undefined);
      apply({ ...next, spaces: [...next.spaces, ...discovered] }, 'config reloaded');
      if (next.discover !== undefined) void refreshSpaces();
    },
    tick() {
      if (parts.scheduler === undefined) return Promise.reject(new Error('this daemon runs no scheduler'));
      return parts.scheduler.tick();
    },
    health,
  };
}
