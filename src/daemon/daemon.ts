import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ConsolidateFunction } from '../core/run.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import { healthOf } from './daemon-health.js';
import {
  restartOnlyChanges,
  startEmbedded,
  startOnRedis,
  startScheduler,
  startServer,
  stopParts,
  type DaemonParts,
  type DaemonRoles,
  type StartContext,
} from './daemon-start.js';
import { redisUrlFor } from './redis.js';
import type { TickReport } from './scheduler.js';
import type { HealthReport } from './daemon-health.js';
import type { DaemonServer } from './server.js';
import type { WorkerTiming } from './worker-pool.js';

export type { DaemonRoles } from './daemon-start.js';

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
  const discover = createDiscover(options.discover);
  let state: DaemonState = 'created';
  let parts: DaemonParts = {};
  let stopping: Promise<void> | undefined;

  const health = (): Promise<HealthReport> => healthOf(parts);

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

  const stopAll = async (): Promise<void> => {
    if (discoverTimer !== undefined) clearInterval(discoverTimer);
    discoverTimer = undefined;
    await stopParts(parts, logger);
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

  /** Starts the parts of this process's roles, in order: queue (embedded or on Redis), scheduler, server. */
  const startParts = async (): Promise<void> => {
    await refreshSpaces();
    const modules = await import('./daemon-parts.js');
    if (roles.server) await modules.assertPortFree(config.server.host, config.server.port);
    const context: StartContext = {
      modules,
      parts,
      roles,
      config: () => config,
      consolidate: options.consolidate,
      inspectSpace: options.inspectSpace,
      logger,
      now,
      workerTiming: options.workerTiming,
      tickOnStart: options.tickOnStart ?? true,
      refreshPending,
      refreshSpaces,
      health,
    };
    const redisUrl = redisUrlFor(config, options.env ?? process.env);
    const { jobs, metrics } =
      redisUrl === undefined ? startEmbedded(context) : await startOnRedis(context, redisUrl);
    parts.jobs = jobs;
    parts.metrics = metrics;
    if (roles.scheduler) startScheduler(context, jobs, metrics);
    if (roles.server) await startServer(context, jobs, metrics);
    // No log line here: the process that started the daemon logs the one start line, with what only it
    // knows (the model in use); a library user's start is theirs to report.
    if (!roles.scheduler && given.discover !== undefined) {
      discoverTimer = setInterval(() => void refreshSpaces(), DISCOVER_EVERY_MS);
      discoverTimer.unref();
    }
  };

  const start = async (): Promise<void> => {
    if (state !== 'created' && state !== 'stopped') throw new Error(`cannot start a daemon that is ${state}`);
    state = 'starting';
    try {
      await startParts();
      state = 'running';
    } catch (error) {
      await stopAll();
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
        await stopAll();
        state = 'stopped';
        stopping = undefined;
      })();
      return stopping;
    },
    reload(next) {
      given = next;
      const fixed = restartOnlyChanges(next, config);
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

/**
 * The discovery a daemon runs: the caller's, else `discovery/` with a cache kept for the daemon's life (a
 * transcript's head is read once), loaded at its first use. A config without `discover` is returned as is.
 */
function createDiscover(given: CreateDaemonOptions['discover']): (base: Config) => Promise<Config> {
  let discoverWith = given;
  return async (base) => {
    if (base.discover === undefined) return base;
    if (discoverWith === undefined) {
      const { createDiscoveryCache, withDiscoveredSpaces } = await import('../discovery/index.js');
      const cache = createDiscoveryCache();
      discoverWith = (next) => withDiscoveredSpaces(next, cache);
    }
    return discoverWith(base);
  };
}
