import { hostname } from 'node:os';
import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ConsolidateFunction, RunSummary } from '../core/run.js';
import {
  createConsolidationProcessor,
  DEFAULT_PROGRESS_DELAY_MS,
  SHUTDOWN_REASON,
} from './consolidation-processor.js';
import { CONSOLIDATION_QUEUE, type ConsolidationJobData } from '../core/jobs.js';
import type { RedisProbe, RedisProbeResult } from './redis-probe.js';
import { createRepeatedLog } from './repeated-log.js';

/** Timings of the worker pool, in milliseconds. Defaults are in {@link DEFAULT_WORKER_TIMING}. */
export interface WorkerTiming {
  /**
   * How long a job's lock lasts without renewal; renewed every half of it. The processor is async (the pipeline
   * awaits the model and the disk), so the event loop stays free to renew. A worker killed with -9 lets the lock
   * expire, and the next stalled check (below) hands the job to another worker: recovery within
   * lockDurationMs + stalledIntervalMs.
   */
  readonly lockDurationMs: number;
  /** Period of the stalled-job check every worker runs. */
  readonly stalledIntervalMs: number;
  /**
   * Times a job may be recovered from a dead worker before it fails. 2: a run survives two crashes; a job that
   * kills its worker every time fails on the third. Safe because a run repeated does the same thing twice.
   */
  readonly maxStalledCount: number;
  /** Period of the Redis health check (INFO run_id) that restarts stopped workers after a Redis restart. */
  readonly healthCheckIntervalMs: number;
  /** On close: how long the current jobs may take to finish before they are aborted and handed back. */
  readonly shutdownTimeoutMs: number;
  /** After aborting: how long the pipeline has to honour the abort before the connections are cut. */
  readonly abortGraceMs: number;
  /** Delay before a busy space (LockBusyError) is tried again (±25 % jitter). */
  readonly busyDelayMs: number;
  /** Delay before a job of a space this daemon does not serve is offered again (±25 % jitter). */
  readonly unknownSpaceDelayMs: number;
  /** How long a run goes before its progress is first written to its job (see DEFAULT_PROGRESS_DELAY_MS). */
  readonly progressDelayMs: number;
}

export const DEFAULT_WORKER_TIMING: WorkerTiming = {
  // 60 s: twice BullMQ's default, because a run blocks on model calls of up to model.timeoutMs (60 s) and we'd
  // rather detect a dead worker a little later than have a busy one declared stalled.
  lockDurationMs: 60_000,
  stalledIntervalMs: 30_000,
  maxStalledCount: 2,
  healthCheckIntervalMs: 5_000,
  // 30 s: a run past its last model call writes for a few seconds; longer than that it is mid-extraction and
  // cheaper to hand back than to wait for (docker stop's own grace period is 10 s, compose's stop_grace_period
  // is raised to 45 s in docker-compose.yml).
  shutdownTimeoutMs: 30_000,
  abortGraceMs: 5_000,
  busyDelayMs: 30_000,
  // 2 s: the daemon that serves the space is on the same Redis and takes the job at its next fetch.
  unknownSpaceDelayMs: 2_000,
  progressDelayMs: DEFAULT_PROGRESS_DELAY_MS,
};

export interface WorkerPoolHooks {
  /** A job completed (the pipeline returned a summary). */
  readonly onCompleted?: (summary: RunSummary, job: Job<ConsolidationJobData, RunSummary>) => void;
  /** A job attempt failed (it may still be retried). */
  readonly onFailed?: (error: Error, job: Job<ConsolidationJobData, RunSummary> | undefined) => void;
}

export interface CreateWorkerPoolOptions {
  readonly config: Config;
  /** BullMQ connection options (see `connectionOptions`). */
  readonly connection: ConnectionOptions;
  readonly consolidate: ConsolidateFunction;
  /** Answers whether Redis is up and whether it restarted; drives the health check. */
  readonly probe: RedisProbe;
  readonly logger: Logger;
  readonly timing?: Partial<WorkerTiming>;
  readonly hooks?: WorkerPoolHooks;
}

export type WorkerPoolState = 'running' | 'redis-down' | 'redis-refuses-writes' | 'closing' | 'closed';

export interface WorkerPool {
  readonly state: WorkerPoolState;
  /** The BullMQ worker in use now (replaced by the health check if it closes unexpectedly). For diagnostics. */
  readonly worker: Worker<ConsolidationJobData, RunSummary>;
  /** True while the BullMQ worker's main loop runs (false while Redis is down and before it resumes). */
  isRunning(): boolean;
  /** Jobs this process is running now. */
  activeJobs(): number;
  /** Takes a new config: spaces added or removed, concurrency changed. */
  reload(config: Config): void;
  /** Runs one health check now (the timer runs it every healthCheckIntervalMs). */
  checkHealth(): Promise<void>;
  /** Stops taking jobs, lets current ones finish (up to shutdownTimeoutMs), hands back the rest. Idempotent. */
  close(): Promise<void>;
}

function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

/** What a BullMQ worker of the pool is built from. */
interface WorkerParts {
  readonly options: CreateWorkerPoolOptions;
  /** The config in force when the worker is built: its Redis prefix and concurrency. */
  readonly config: Config;
  readonly timing: WorkerTiming;
  readonly logger: Logger;
  readonly processor: ReturnType<typeof createConsolidationProcessor>;
  /** Ids of the jobs running now, kept up to date by the worker. */
  readonly active: Set<string>;
  readonly workerErrors: ReturnType<typeof createRepeatedLog>;
}

/** A BullMQ worker of the `consolidation` queue that runs the processor and reports its events. */
function createBullWorker(parts: WorkerParts): Worker<ConsolidationJobData, RunSummary> {
  const { options, config, timing, logger, processor, active, workerErrors } = parts;
  const worker = new Worker<ConsolidationJobData, RunSummary>(
    CONSOLIDATION_QUEUE,
    async (job, token, signal) => {
      const key = job.id ?? '';
      active.add(key);
      try {
        return await processor(job, token, signal);
      } finally {
        active.delete(key);
      }
    },
    {
      connection: options.connection,
      prefix: config.redisPrefix,
      name: `${hostname()}:${process.pid}`,
      concurrency: config.workers.concurrency,
      lockDuration: timing.lockDurationMs,
      stalledInterval: timing.stalledIntervalMs,
      maxStalledCount: timing.maxStalledCount,
      // BullMQ's per-minute completed/failed counts (getMetrics, bullmq_job_*_total in /metrics): a week of
      // one-minute points is 10 080 small numbers per list in Redis.
      metrics: { maxDataPoints: 7 * 24 * 60 },
    },
  );
  worker.on('error', (error) => workerErrors.report(error));
  worker.on('stalled', (jobId) =>
    logger.warn(
      { jobId },
      'job stalled: the worker that held it stopped renewing its lock (it crashed, was paused, or its event loop was blocked); it runs again',
    ),
  );
  worker.on('completed', (job, summary) => options.hooks?.onCompleted?.(summary, job));
  worker.on('failed', (job, error) => {
    logger.warn({ jobId: job?.id, err: error }, 'job attempt failed');
    options.hooks?.onFailed?.(error, job);
  });
  return worker;
}

/** Closes a worker: current jobs may finish within shutdownTimeoutMs, then are aborted, then cut off. */
async function closeWorker(
  current: Worker<ConsolidationJobData, RunSummary>,
  active: ReadonlySet<string>,
  timing: WorkerTiming,
  logger: Logger,
): Promise<void> {
  const closed = current.close();
  if (!(await settlesWithin(closed, timing.shutdownTimeoutMs))) {
    logger.warn({ jobs: [...active] }, 'jobs still running at shutdown; aborting them and handing them back');
    current.cancelAllJobs(SHUTDOWN_REASON);
    if (!(await settlesWithin(closed, timing.abortGraceMs))) {
      // The pipeline ignored the abort. Cut the connections: the job's lock expires after lockDurationMs and
      // another worker's stalled check hands the job on.
      logger.error({ jobs: [...active] }, 'jobs ignored the abort; disconnecting, their locks will expire');
      closed.catch(() => undefined);
      await current.disconnect().catch(() => undefined);
    }
  }
}

/**
 * What a health check's probe answer means for a pool that is not stopping: its next state and the Redis run id
 * to remember; `restarted` is set when Redis is healthy (then the worker must run), and says whether Redis
 * restarted. A change of state is logged once.
 */
function afterProbe(
  state: WorkerPoolState,
  lastRunId: string | undefined,
  result: RedisProbeResult,
  logger: Logger,
): { state: WorkerPoolState; lastRunId: string | undefined; restarted?: boolean } {
  if (!result.up) {
    if (state !== 'redis-down')
      logger.warn({ error: result.error }, 'Redis unreachable; workers wait for it');
    return { state: 'redis-down', lastRunId };
  }
  const restarted = lastRunId !== undefined && result.runId !== lastRunId;
  if (!result.writable) {
    if (state !== 'redis-refuses-writes') {
      logger.warn(
        { reason: result.reason },
        'Redis refuses writes; no job can run until it takes them again',
      );
    }
    return { state: 'redis-refuses-writes', lastRunId: result.runId };
  }
  if (state === 'redis-down' || state === 'redis-refuses-writes' || restarted) {
    logger.info({ restarted, was: state }, 'Redis is back and takes writes');
    return { state: 'running', lastRunId: result.runId, restarted };
  }
  return { state, lastRunId: result.runId, restarted };
}

/**
 * BullMQ workers of the `consolidation` queue in this process (one Worker with `workers.concurrency` slots).
 *
 * States:
 * - running: the worker fetches and processes jobs;
 * - redis-down: the health check cannot reach Redis; BullMQ keeps reconnecting on its own;
 *   → running when Redis answers again (a new run_id tells a full restart from a dropped connection).
 * - redis-refuses-writes: Redis answers but refuses writes (read-only replica, out of memory, failed snapshot);
 *   no job can be taken or finished; → running when a write goes through again. The worker's own errors of
 *   the meantime are logged once per kind with a count (createRepeatedLog), not once per attempt.
 * In running, every health check also makes sure the worker's main loop runs: `run()` again if it stopped, a
 * new Worker if it closed. BullMQ reconnects by itself in the cases we tested; this is the safety net for the
 * ones where it does not (a main loop that ended on an error during the outage).
 * - closing: `close()` was called; no new jobs; current ones finish or are handed back;
 * - closed.
 *
 * One run per space at a time across all machines: the queue holds at most one job per space (deduplication by
 * space id lasts while the job waits, is delayed or runs), so two workers never get the same space; a run started
 * outside the queue (`dreamd consolidate` in-process) holds the space's file lock, and the job then waits for it
 * as a delayed job (LockBusyError → `moveToDelayed` + DelayedError, no attempt spent) rather than failing or
 * spending its retries, which are kept for real failures.
 */
export function createWorkerPool(options: CreateWorkerPoolOptions): WorkerPool {
  const timing: WorkerTiming = { ...DEFAULT_WORKER_TIMING, ...options.timing };
  const logger = options.logger.child({ component: 'worker-pool' });
  let config = options.config;
  let state: WorkerPoolState = 'running';
  let lastRunId: string | undefined;
  let closing: Promise<void> | undefined;
  const active = new Set<string>();
  const workerErrors = createRepeatedLog(logger, 'worker error');

  const processor = createConsolidationProcessor({
    consolidate: options.consolidate,
    findSpace: (spaceId) => config.spaces.find((space) => space.id === spaceId),
    busyDelayMs: timing.busyDelayMs,
    unknownSpaceDelayMs: timing.unknownSpaceDelayMs,
    progressDelayMs: timing.progressDelayMs,
    logger,
  });

  const createWorker = (): Worker<ConsolidationJobData, RunSummary> =>
    createBullWorker({ options, config, timing, logger, processor, active, workerErrors });

  let worker = createWorker();

  // A function, not an inline test: `state` changes across awaits, which TypeScript's narrowing does not see.
  const isStopping = (): boolean => state === 'closing' || state === 'closed';

  const ensureRunning = (why: string): void => {
    if (isStopping()) return;
    if (worker.closing !== undefined) {
      logger.warn({ why }, 'worker had closed; starting a new one');
      worker = createWorker();
      return;
    }
    if (!worker.isRunning()) {
      logger.warn({ why }, 'worker had stopped; starting it again');
      worker.run().catch((error: unknown) => logger.error({ err: error }, 'worker stopped'));
    }
  };

  const checkHealth = async (): Promise<void> => {
    if (isStopping()) return;
    const result = await options.probe.check();
    if (isStopping()) return;
    const next = afterProbe(state, lastRunId, result, logger);
    state = next.state;
    lastRunId = next.lastRunId;
    if (next.restarted === undefined) return;
    // Every healthy check, not only after an outage: both tests are local (no Redis call), and a worker whose
    // main loop ended for any reason is restarted within one interval.
    ensureRunning(next.restarted ? 'Redis restarted' : 'health check');
  };

  // A self-rescheduling timer rather than setInterval, so two checks never overlap when Redis is slow.
  let timer: NodeJS.Timeout | undefined;
  const scheduleHealthCheck = (): void => {
    timer = setTimeout(() => {
      checkHealth()
        .catch((error: unknown) => logger.error({ err: error }, 'health check failed'))
        .finally(() => {
          if (!isStopping()) scheduleHealthCheck();
        });
    }, timing.healthCheckIntervalMs);
    timer.unref();
  };
  scheduleHealthCheck();

  const close = async (): Promise<void> => {
    state = 'closing';
    if (timer !== undefined) clearTimeout(timer);
    await closeWorker(worker, active, timing, logger);
    state = 'closed';
    workerErrors.flush();
  };

  return {
    get state() {
      return state;
    },
    get worker() {
      return worker;
    },
    isRunning: () => state !== 'closed' && worker.isRunning(),
    activeJobs: () => active.size,
    reload(next) {
      config = next;
      if (worker.concurrency !== next.workers.concurrency) worker.concurrency = next.workers.concurrency;
    },
    checkHealth,
    close() {
      closing ??= close();
      return closing;
    },
  };
}
