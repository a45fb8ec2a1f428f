/**
 * The daemon's parts started one by one, each from the modules `createDaemon` loads when it starts
 * (`daemon-parts.ts`): the embedded queue, or Redis with its queue, fleet entry and worker pool; the
 * scheduler; the HTTP server. Each records what it started in `parts`, so a failed start stops exactly that.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ConsolidateFunction, RunSummary } from '../core/run.js';
import type { InspectSpaceFunction } from '../core/inspection.js';
import { ConfigError } from '../errors.js';
import type * as DaemonPartsModule from './daemon-parts.js';
import type { EmbeddedQueue } from './embedded-queue.js';
import type { Fleet } from './fleet.js';
import type { JobQueue } from './jobs.js';
import type { DaemonMetrics } from './metrics.js';
import type { ConsolidationQueue } from './queue.js';
import type { RedisProbe } from './redis-probe.js';
import { redisUrlFor } from './redis.js';
import { createRepeatedLog } from './repeated-log.js';
import type { Scheduler } from './scheduler.js';
import type { HealthReport } from './daemon-health.js';
import type { DaemonServer } from './server.js';
import type { WorkerPool, WorkerTiming } from './worker-pool.js';

/** The heavy modules, loaded when a daemon starts. */
export type DaemonModules = typeof DaemonPartsModule;

/** Which parts this process runs: `dreamd start` all three, `dreamd worker` workers, `dreamd scheduler` the tick. */
export interface DaemonRoles {
  readonly scheduler: boolean;
  readonly workers: boolean;
  readonly server: boolean;
}

/** What a started daemon holds; each absent until started, all dropped on stop. */
export interface DaemonParts {
  redisUrl?: string;
  fleet?: Fleet;
  probe?: RedisProbe;
  queue?: ConsolidationQueue;
  embedded?: EmbeddedQueue;
  jobs?: JobQueue;
  metrics?: DaemonMetrics;
  pool?: WorkerPool;
  scheduler?: Scheduler;
  server?: DaemonServer;
  address?: string;
}

/** What starting a part needs: the modules, the daemon's options and its callbacks. */
export interface StartContext {
  readonly modules: DaemonModules;
  readonly parts: DaemonParts;
  readonly roles: DaemonRoles;
  /** The config in effect (reloads change it). */
  readonly config: () => Config;
  readonly consolidate: ConsolidateFunction;
  readonly inspectSpace: InspectSpaceFunction;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly workerTiming: Partial<WorkerTiming> | undefined;
  readonly tickOnStart: boolean;
  /** After a run: its space's pending-sessions gauge is read again. */
  readonly refreshPending: (spaceId: string) => void;
  /** Discovers spaces again, before each tick. */
  readonly refreshSpaces: () => Promise<void>;
  readonly health: () => Promise<HealthReport>;
}

/** Starts the parts of the process's roles, in order: queue (embedded or on Redis), scheduler, server. */
export async function startRoles(
  context: StartContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const config = context.config();
  if (context.roles.server) await context.modules.assertPortFree(config.server.host, config.server.port);
  const redisUrl = redisUrlFor(config, env);
  const { jobs, metrics } =
    redisUrl === undefined ? startEmbedded(context) : await startOnRedis(context, redisUrl);
  context.parts.jobs = jobs;
  context.parts.metrics = metrics;
  if (context.roles.scheduler) startScheduler(context, jobs, metrics);
  if (context.roles.server) await startServer(context, jobs, metrics);
}

/** The queue without Redis: in this process, with the workers; only `dreamd start` (all roles) may run it. */
export function startEmbedded(context: StartContext): { jobs: JobQueue; metrics: DaemonMetrics } {
  const { roles, parts, workerTiming: timing } = context;
  if (!roles.workers || !roles.scheduler) {
    throw new ConfigError(
      `${roles.workers ? '`dreamd worker`' : '`dreamd scheduler`'} runs apart from the other half and ` +
        'shares jobs through Redis: set REDIS_URL (or "redisUrl" in the config). Without Redis, ' +
        '`dreamd start` runs scheduler, workers and API in one process.',
      'redisUrl',
    );
  }
  const embedded = context.modules.createEmbeddedQueue({
    getConfig: context.config,
    consolidate: context.consolidate,
    logger: context.logger,
    timing: {
      ...(timing?.busyDelayMs !== undefined ? { busyDelayMs: timing.busyDelayMs } : {}),
      ...(timing?.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: timing.shutdownTimeoutMs } : {}),
    },
    onCompleted: (summary) => {
      parts.metrics?.recordRun(summary);
      context.refreshPending(summary.spaceId);
    },
    onFailed: (_error, spaceId) => parts.metrics?.recordFailure(spaceId),
  });
  parts.embedded = embedded;
  return { jobs: embedded, metrics: context.modules.createMetrics(embedded) };
}

/** BullMQ on Redis: the probe, the queue, this daemon's fleet entry, and the worker pool (workers role). */
export async function startOnRedis(
  context: StartContext,
  redisUrl: string,
): Promise<{ jobs: JobQueue; metrics: DaemonMetrics }> {
  const { modules, parts, logger } = context;
  const config = context.config();
  parts.redisUrl = redisUrl;
  const connection = modules.connectionOptions(redisUrl);
  const probe = modules.createRedisProbe(redisUrl, {
    key: `${config.redisPrefix}:probe:${hostname()}:${process.pid}`,
  });
  parts.probe = probe;
  const queue = modules.createConsolidationQueue({ connection, prefix: config.redisPrefix });
  const queueErrors = createRepeatedLog(logger, 'queue error');
  queue.on('error', (error) => queueErrors.report(error));
  parts.queue = queue;
  await queue.waitUntilReady();
  await joinFleet(context, redisUrl);
  const jobs = modules.bullmqJobs(queue);
  const metrics = modules.createMetrics(jobs, queue, async () => {
    const checked = await probe.check();
    return !checked.up ? 'down' : checked.writable ? 'up' : 'refuses-writes';
  });
  if (context.roles.workers) {
    parts.pool = modules.createWorkerPool({
      config,
      connection,
      consolidate: context.consolidate,
      probe,
      logger,
      ...(context.workerTiming !== undefined ? { timing: context.workerTiming } : {}),
      hooks: {
        onCompleted: (summary: RunSummary) => {
          metrics.recordRun(summary);
          context.refreshPending(summary.spaceId);
        },
        onFailed: (_error, job) => metrics.recordFailure(job?.data.spaceId),
      },
    });
  }
  return { jobs, metrics };
}

/** Announces this daemon and its spaces on Redis, for the fleet's view of who runs what. */
async function joinFleet(context: StartContext, redisUrl: string): Promise<void> {
  const { logger } = context;
  // Its own small connection: BullMQ 6 does not expose the queue's.
  const fleetClient = new context.modules.Redis(redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 2_000 });
  fleetClient.on('error', () => undefined); // the probe and the workers report Redis being away
  const fleet = context.modules.createFleet({
    store: () => Promise.resolve(fleetClient),
    onLeft: () => fleetClient.disconnect(),
    prefix: context.config().redisPrefix,
    spaces: () => context.config().spaces.map((space) => space.id),
    logger,
  });
  context.parts.fleet = fleet;
  // A warning, never a refusal: a fleet being reconfigured passes through mixed configs on purpose.
  await fleet
    .announce()
    .catch((error: unknown) => logger.warn({ err: error }, 'could not announce this daemon on Redis'));
}

/** The scheduler's tick, started, with a first tick at once unless told otherwise. */
export function startScheduler(context: StartContext, jobs: JobQueue, metrics: DaemonMetrics): void {
  const { logger } = context;
  const scheduler = context.modules.createScheduler({
    config: context.config(),
    jobs,
    inspectSpace: context.inspectSpace,
    now: context.now,
    logger,
    beforeTick: context.refreshSpaces,
    onInspected: (inspection) => metrics.setPendingSessions(inspection.spaceId, inspection.settledNew),
  });
  context.parts.scheduler = scheduler;
  scheduler.start();
  if (context.tickOnStart) {
    scheduler.tick().catch((error: unknown) => logger.error({ err: error }, 'first tick failed'));
  }
}

/** The HTTP server, listening. */
export async function startServer(
  context: StartContext,
  jobs: JobQueue,
  metrics: DaemonMetrics,
): Promise<void> {
  const server = await context.modules.createServer({
    getConfig: context.config,
    jobs,
    dashboardQueue: context.parts.queue,
    inspectSpace: context.inspectSpace,
    metrics,
    health: context.health,
    now: context.now,
    logger: context.logger,
  });
  context.parts.server = server;
  context.parts.address = await server.listen();
}

/** Stops every part started, last started first; a part that fails to stop is logged and the rest go on. */
export async function stopParts(parts: DaemonParts, logger: Logger): Promise<void> {
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
}

/** The settings of `next` that differ from `current` and take a restart to change. */
export function restartOnlyChanges(next: Config, current: Config): string[] {
  const fixed: string[] = (['redisUrl', 'redisPrefix', 'stateDir'] as const).filter(
    (key) => next[key] !== current[key],
  );
  if (next.server.host !== current.server.host) fixed.push('server.host');
  if (next.server.port !== current.server.port) fixed.push('server.port');
  if (next.server.apiToken !== current.server.apiToken) fixed.push('server.apiToken');
  return fixed;
}
