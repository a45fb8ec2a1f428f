import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ConsolidateFunction } from '../core/run.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import { createDaemonConfig } from './daemon-config.js';
import { healthOf } from './daemon-health.js';
import {
  startRoles,
  stopParts,
  type DaemonParts,
  type DaemonRoles,
  type StartContext,
} from './daemon-start.js';
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
  let discoverTimer: NodeJS.Timeout | undefined;
  let state: DaemonState = 'created';
  let parts: DaemonParts = {};
  let stopping: Promise<void> | undefined;
  const settings = createDaemonConfig({
    config: options.config,
    logger,
    discover: createDiscover(options.discover),
    check: (next) => parts.scheduler?.reload(next), // throws on a bad schedule before anything changed
    applied: (next) => {
      parts.pool?.reload(next);
      parts.embedded?.reload(next);
      parts.metrics?.retainSpaces(next.spaces.map((space) => space.id));
    },
  });
  const config = settings.current;
  const refreshSpaces = settings.refreshSpaces;
  const health = (): Promise<HealthReport> => healthOf(parts);

  const stopAll = async (): Promise<void> => {
    if (discoverTimer !== undefined) clearInterval(discoverTimer);
    discoverTimer = undefined;
    await stopParts(parts, logger);
    parts = {};
  };

  // After a run, the pending-sessions gauge of its space is read again instead of waiting for the next tick.
  const refreshPending = (spaceId: string): void => {
    const space = config().spaces.find((candidate) => candidate.id === spaceId);
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
    const context: StartContext = {
      modules,
      parts,
      roles,
      config,
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
    await startRoles(context, options.env ?? process.env);
    // No log line here: the process that started the daemon logs the one start line, with what only it
    // knows (the model in use); a library user's start is theirs to report.
    if (!roles.scheduler && settings.given().discover !== undefined) {
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
      return config();
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
    reload: settings.reload,
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
