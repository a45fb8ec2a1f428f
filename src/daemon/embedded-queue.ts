/**
 * The embedded queue: consolidation jobs in this process, for a daemon without Redis (`dreamd start` with no
 * REDIS_URL). It keeps the guarantees that matter on one machine:
 * - one run per space at a time: a space with a job waiting, delayed or running gets no second job (the same
 *   rule as BullMQ's deduplication by space id), and the space's file lock still guards the memory folder;
 * - at most `workers.concurrency` runs at once (p-queue), changed on reload;
 * - retries with exponential backoff and jitter up to `workers.attempts`; a busy space (LockBusyError) waits
 *   without spending an attempt; a ConfigError or a model error that cannot be retried fails at once;
 * - job ids, progress and results for the HTTP API and `dreamd consolidate`;
 * - a graceful stop: running jobs get `shutdownTimeoutMs` to finish, then are aborted; queued ones are dropped.
 *
 * Jobs live in memory only. Nothing is lost when the process stops: gates are state (the ledger and the run
 * records on disk), so the next start's first tick queues whatever is still due.
 */
import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { slimRunSummary } from '../consolidation/summary/slim-summary.js';
import { ConsolidationJobData } from '../core/jobs.js';
import type { ConsolidateFunction, RunProgress, RunSummary } from '../core/run.js';
import { ConfigError, LockBusyError, ModelError, errorMessage } from '../errors.js';
import { JOB_STATES, type JobQueue, type JobState, type JobView } from './jobs.js';
import { BACKOFF_JITTER, JOB_RETENTION } from './queue.js';

export interface EmbeddedQueueTiming {
  /** Delay before a busy space is tried again, ms (±25 % jitter). */
  readonly busyDelayMs: number;
  /** How long running jobs may take to finish once `close()` is called, ms; then they are aborted. */
  readonly shutdownTimeoutMs: number;
}

export const DEFAULT_EMBEDDED_TIMING: EmbeddedQueueTiming = {
  busyDelayMs: 30_000,
  shutdownTimeoutMs: 30_000,
};

/** Why a run is aborted when the daemon stops. */
export const EMBEDDED_SHUTDOWN_REASON = 'dreamd stopping';

export interface CreateEmbeddedQueueOptions {
  readonly getConfig: () => Config;
  readonly consolidate: ConsolidateFunction;
  readonly logger: Logger;
  readonly timing?: Partial<EmbeddedQueueTiming>;
  /** Called with each finished run (metrics). */
  readonly onCompleted?: (summary: RunSummary) => void;
  /** Called with each failed attempt (metrics). */
  readonly onFailed?: (error: unknown, spaceId: string) => void;
  readonly now?: () => number;
  readonly random?: () => number;
}

export interface EmbeddedQueue extends JobQueue {
  readonly kind: 'embedded';
  /** False once `close()` was called. */
  isRunning(): boolean;
  /** Applies a new `workers.concurrency`. */
  reload(config: Config): void;
  close(): Promise<void>;
}

interface Job {
  readonly id: string;
  readonly data: ConsolidationJobData;
  state: JobState;
  progress: unknown;
  attemptsMade: number;
  failedReason: string | undefined;
  summary: RunSummary | undefined;
  finishedOn: number | undefined;
  timer: NodeJS.Timeout | undefined;
  abort: AbortController | undefined;
}

function view(job: Job): JobView {
  return {
    id: job.id,
    spaceId: job.data.spaceId,
    trigger: job.data.trigger,
    state: job.state,
    progress: job.progress,
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason,
    summary: job.summary,
    finishedAt: job.finishedOn !== undefined ? new Date(job.finishedOn).toISOString() : undefined,
  };
}

export function createEmbeddedQueue(options: CreateEmbeddedQueueOptions): EmbeddedQueue {
  const timing = { ...DEFAULT_EMBEDDED_TIMING, ...options.timing };
  const logger = options.logger.child({ component: 'embedded-queue' });
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const runner = new PQueue({ concurrency: options.getConfig().workers.concurrency });
  const jobs = new Map<string, Job>();
  /** Space id → the id of its job that is waiting, delayed or active. */
  const current = new Map<string, string>();
  let running = true;

  const finish = (job: Job, state: 'completed' | 'failed'): void => {
    job.state = state;
    job.finishedOn = now();
    job.abort = undefined;
    if (current.get(job.data.spaceId) === job.id) current.delete(job.data.spaceId);
    trimFinished(jobs, now());
  };

  const later = (job: Job, delayMs: number): void => {
    job.state = 'delayed';
    job.timer = setTimeout(() => {
      job.timer = undefined;
      if (running) schedule(job);
    }, delayMs);
    job.timer.unref();
  };

  const attempt = async (job: Job): Promise<void> => {
    if (!running) return;
    const config = options.getConfig();
    const log = logger.child({ jobId: job.id, spaceId: job.data.spaceId });
    const space = config.spaces.find((candidate) => candidate.id === job.data.spaceId);
    if (space === undefined) {
      job.failedReason = `no space "${job.data.spaceId}" in the config; add it to the config file (reloaded on SIGHUP)`;
      finish(job, 'failed');
      return;
    }
    job.state = 'active';
    job.attemptsMade += 1;
    job.abort = new AbortController();
    try {
      const summary = await options.consolidate(
        space,
        { force: job.data.force, dryRun: job.data.dryRun, trigger: job.data.trigger, jobId: job.id },
        { signal: job.abort.signal, onProgress: (progress: RunProgress) => (job.progress = { ...progress }) },
      );
      job.summary = slimRunSummary(summary);
      finish(job, 'completed');
      options.onCompleted?.(summary);
      log.info(
        { status: summary.status, added: summary.added, durationMs: summary.durationMs },
        'run finished',
      );
    } catch (error) {
      job.abort = undefined;
      if (!running) {
        job.failedReason = `${EMBEDDED_SHUTDOWN_REASON}: ${errorMessage(error)}`;
        finish(job, 'failed');
        log.warn(
          'run aborted because the daemon stopped; the next start queues the space again if still due',
        );
        return;
      }
      failedAttempt(job, error, {
        log,
        config,
        busyDelayMs: timing.busyDelayMs,
        random,
        finish,
        later,
        onFailed: options.onFailed,
      });
    }
  };

  const schedule = (job: Job): void => {
    job.state = 'waiting';
    runner.add(() => attempt(job)).catch((error: unknown) => logger.error({ err: error }, 'job crashed'));
  };

  return {
    kind: 'embedded',
    isRunning: () => running,
    async enqueue(spaceId, request, { now: requestedAt }) {
      if (!running) throw new Error('the embedded queue is stopping; it takes no new jobs');
      const existing = current.get(spaceId);
      if (existing !== undefined) return { status: 'duplicate', jobId: existing };
      const data = ConsolidationJobData.parse({
        spaceId,
        force: request.force,
        dryRun: request.dryRun,
        trigger: request.trigger,
        requestedAt: requestedAt.toISOString(),
      });
      const job = newJob(data);
      jobs.set(job.id, job);
      current.set(spaceId, job.id);
      schedule(job);
      return { status: 'queued', jobId: job.id };
    },
    ...jobViews(jobs, current),
    reload(config) {
      runner.concurrency = config.workers.concurrency;
    },
    async close() {
      if (!running) return;
      running = false;
      runner.clear();
      for (const job of jobs.values()) {
        if (job.timer !== undefined) clearTimeout(job.timer);
        if (job.state === 'waiting' || job.state === 'delayed') {
          job.failedReason = `${EMBEDDED_SHUTDOWN_REASON} before the job ran`;
          finish(job, 'failed');
        }
      }
      await drain(runner, jobs, timing.shutdownTimeoutMs, logger);
    },
  };
}

/** The queue's reads of its jobs: a space's current job, one job, the finished and failed ones, the counts. */
function jobViews(
  jobs: ReadonlyMap<string, Job>,
  current: ReadonlyMap<string, string>,
): Pick<EmbeddedQueue, 'currentJob' | 'getJob' | 'finished' | 'failed' | 'counts'> {
  const finished = async (limit: number): Promise<JobView[]> =>
    [...jobs.values()]
      .filter((job) => job.finishedOn !== undefined)
      .sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))
      .slice(0, limit)
      .map(view);
  return {
    async currentJob(spaceId) {
      const id = current.get(spaceId);
      const job = id === undefined ? undefined : jobs.get(id);
      return job === undefined ? null : { id: job.id, state: job.state };
    },
    async getJob(id) {
      const job = jobs.get(id);
      return job === undefined ? undefined : view(job);
    },
    finished,
    async failed(limit) {
      return (await finished(Number.MAX_SAFE_INTEGER))
        .filter((job) => job.state === 'failed')
        .slice(0, limit);
    },
    async counts() {
      return countsOf(jobs.values());
    },
  };
}

/** Waits for the runs in flight; past `timeoutMs`, aborts them and waits for them to end. */
async function drain(
  runner: PQueue,
  jobs: ReadonlyMap<string, Job>,
  timeoutMs: number,
  logger: Logger,
): Promise<void> {
  const idle = runner.onIdle();
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(() => resolve('timeout'), timeoutMs).unref(),
  );
  if ((await Promise.race([idle.then(() => 'idle' as const), timeout])) === 'timeout') {
    logger.warn({ timeoutMs: timeoutMs }, 'runs still going at shutdown; aborting them');
    for (const job of jobs.values()) job.abort?.abort(new Error(EMBEDDED_SHUTDOWN_REASON));
    await idle;
  }
}

/** Keeps finished jobs within the same bounds BullMQ's retention gives (count, then age). */
function trimFinished(jobs: Map<string, Job>, nowMs: number): void {
  const cutoff = (state: 'completed' | 'failed'): void => {
    const { age, count } =
      state === 'completed' ? JOB_RETENTION.removeOnComplete : JOB_RETENTION.removeOnFail;
    const finished = [...jobs.values()].filter((job) => job.state === state);
    const oldest = nowMs - age * 1000;
    finished.forEach((job, index) => {
      if (index < finished.length - count || (job.finishedOn ?? 0) < oldest) jobs.delete(job.id);
    });
  };
  cutoff('completed');
  cutoff('failed');
}

/** A job just queued. */
function newJob(data: ConsolidationJobData): Job {
  return {
    id: randomUUID(),
    data,
    state: 'waiting',
    progress: 0,
    attemptsMade: 0,
    failedReason: undefined,
    summary: undefined,
    finishedOn: undefined,
    timer: undefined,
    abort: undefined,
  };
}

/** How many jobs are in each state. */
function countsOf(jobs: Iterable<Job>): Record<JobState, number> {
  const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
  for (const job of jobs) counts[job.state] += 1;
  return counts;
}

/** What the queue does with a job whose attempt failed, and how it says so (see {@link nextStep}). */
function failedAttempt(
  job: Job,
  error: unknown,
  context: {
    readonly log: Logger;
    readonly config: Config;
    readonly busyDelayMs: number;
    readonly random: () => number;
    readonly finish: (job: Job, state: 'failed') => void;
    readonly later: (job: Job, delayMs: number) => void;
    readonly onFailed: CreateEmbeddedQueueOptions['onFailed'];
  },
): void {
  const { log, finish, later } = context;
  const next = nextStep(error, job, context.config, context.busyDelayMs, context.random);
  if (next.step === 'busy') {
    log.info(
      { holder: (error as LockBusyError).holder, delayMs: next.delayMs },
      'space is busy; trying again later',
    );
    later(job, next.delayMs);
    return;
  }
  context.onFailed?.(error, job.data.spaceId);
  job.failedReason = errorMessage(error);
  if (next.step === 'fail') {
    log.warn({ attempt: job.attemptsMade, kind: errorKind(error), message: job.failedReason }, 'job failed');
    finish(job, 'failed');
    return;
  }
  log.warn(
    { attempt: job.attemptsMade, kind: errorKind(error), message: job.failedReason, delayMs: next.delayMs },
    'job attempt failed; retrying',
  );
  later(job, next.delayMs);
}

/**
 * What follows a failed attempt: a busy space waits about `busyDelayMs` (±25 %) and spends no attempt; a
 * config error, a model error no retry helps, or the last attempt fails the job; else a retry after BullMQ's
 * exponential backoff with the same jitter: [1 - jitter, 1] × 2^(attempt-1) × backoffMs.
 */
function nextStep(
  error: unknown,
  job: Job,
  config: Config,
  busyDelayMs: number,
  random: () => number,
): { step: 'busy' | 'retry'; delayMs: number } | { step: 'fail' } {
  if (error instanceof LockBusyError) {
    job.attemptsMade -= 1; // waiting for a busy space spends no attempt
    return { step: 'busy', delayMs: Math.round(busyDelayMs * (0.75 + random() * 0.5)) };
  }
  const final =
    error instanceof ConfigError ||
    (error instanceof ModelError && !error.retryable) ||
    job.attemptsMade >= config.workers.attempts;
  if (final) return { step: 'fail' };
  const exponential = config.workers.backoffMs * 2 ** (job.attemptsMade - 1);
  return {
    step: 'retry',
    delayMs: Math.round(exponential * (1 - BACKOFF_JITTER + BACKOFF_JITTER * random())),
  };
}

function errorKind(error: unknown): string {
  if (error instanceof ModelError) return `model:${error.details.kind}`;
  return error instanceof Error ? error.name : typeof error;
}
