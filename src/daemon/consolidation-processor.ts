import { DelayedError, UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Space } from '../config/schema.js';
import type { ConsolidateFunction, RunProgress, RunSummary } from '../core/run.js';
import { ConfigError, LockBusyError, ModelError, errorMessage } from '../errors.js';
import { ConsolidationJobData } from '../core/jobs.js';
import { slimRunSummary } from '../consolidation/summary/slim-summary.js';

/** The reason a worker aborts a run when it shuts down: the job is handed back to the queue, not failed. */
export const SHUTDOWN_REASON = 'dreamd worker shutting down';

export interface ConsolidationProcessorOptions {
  readonly consolidate: ConsolidateFunction;
  /** The space of this id in the worker's current config, or undefined. */
  readonly findSpace: (spaceId: string) => Space | undefined;
  /**
   * Delay before a job whose space is busy (LockBusyError) is tried again, in ms, before jitter (±25 %).
   * Default 30 s: about the time a short run takes; a long run is simply waited out in several steps.
   */
  readonly busyDelayMs?: number;
  /**
   * Delay before a job of a space this worker does not serve is offered again, in ms, before jitter (±25 %).
   * Default 2 s: another daemon on the same Redis and prefix serves that space, and its workers should get
   * the job soon; each hand-back costs one Redis call.
   */
  readonly unknownSpaceDelayMs?: number;
  /**
   * How long a job of a space no worker here serves is handed back before it fails, in ms from its creation.
   * Default 1 h: long enough for the daemon that serves it to come back from a restart; past it nobody does,
   * and the job fails with the fix rather than circling for ever.
   */
  readonly unknownSpacePatienceMs?: number;
  /**
   * How long a run goes before its progress is first written to the job, in ms (default
   * {@link DEFAULT_PROGRESS_DELAY_MS}). A run that finishes sooner writes none: its summary says it all.
   */
  readonly progressDelayMs?: number;
  readonly logger: Logger;
  readonly now?: () => number;
  readonly random?: () => number;
}

/**
 * 250 ms: a run on a warm space takes tens of milliseconds without the model, and each progress write is a
 * Redis script call (about a tenth of a millisecond of the worker's CPU and as much of Redis's, nine of them a
 * run). Anyone watching (`dreamd consolidate --wait` polls every few hundred ms, the dashboard less often)
 * sees no difference: a run that lasts longer writes its progress from then on.
 */
export const DEFAULT_PROGRESS_DELAY_MS = 250;

/**
 * Progress of one run written to its job: in order, at most one write in flight, and only the latest update
 * of those reported meanwhile (a reader only ever shows the latest). Nothing is written during the first
 * `delayMs`. `finish()` waits for the writes under way and the one pending, if writing has started; a run that
 * ends before the delay writes nothing. A failed write is reported to `onError`, never thrown.
 */
export function createProgressReporter(
  write: (progress: RunProgress) => Promise<unknown>,
  onError: (error: unknown) => void,
  delayMs: number,
): { report: (progress: RunProgress) => void; finish: () => Promise<void> } {
  let pending: RunProgress | undefined;
  let inFlight: Promise<void> | undefined;
  let started = delayMs <= 0;
  let finished = false;
  const flush = (): void => {
    if (inFlight !== undefined || pending === undefined || !started) return;
    const next = pending;
    pending = undefined;
    inFlight = write(next)
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => {
        inFlight = undefined;
        flush();
      });
  };
  const timer = started
    ? undefined
    : setTimeout(() => {
        if (finished) return;
        started = true;
        flush();
      }, delayMs);
  timer?.unref();
  return {
    report(progress) {
      if (finished) return;
      pending = progress;
      flush();
    },
    async finish() {
      finished = true;
      if (timer !== undefined) clearTimeout(timer);
      if (!started) pending = undefined;
      while (inFlight !== undefined) await inFlight;
    },
  };
}

export type ConsolidationProcessor = (
  job: Job<unknown, RunSummary, string>,
  token?: string,
  signal?: AbortSignal,
) => Promise<RunSummary>;

/**
 * The BullMQ processor of `consolidation-requested` jobs: validate the payload, run the pipeline, report progress.
 *
 * Errors, mapped to what BullMQ understands:
 * - a space this worker does not serve: the job is handed back (moved to `delayed`, no attempt spent) for a
 *   worker of another daemon on the same Redis that serves it, for up to `unknownSpacePatienceMs`; then it fails;
 * - payload invalid, ConfigError, ModelError that cannot be retried (missing or rejected key):
 *   UnrecoverableError, the job fails at once (a retry cannot help);
 * - LockBusyError (another run holds the space, e.g. a manual in-process `dreamd consolidate`): the job is moved
 *   back to `delayed` without spending an attempt (DelayedError) and runs once the lock is free;
 * - aborted because the worker shuts down: the job is moved back to `wait` (WaitingError) for another worker;
 * - anything else is re-thrown: BullMQ retries with exponential backoff until `workers.attempts` are spent.
 */
export function createConsolidationProcessor(options: ConsolidationProcessorOptions): ConsolidationProcessor {
  const busyDelayMs = options.busyDelayMs ?? 30_000;
  const progressDelayMs = options.progressDelayMs ?? DEFAULT_PROGRESS_DELAY_MS;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const unknownSpaceDelayMs = options.unknownSpaceDelayMs ?? 2_000;
  const unknownSpacePatienceMs = options.unknownSpacePatienceMs ?? 60 * 60_000;
  const handedBackSpaces = new Set<string>();

  return async function processConsolidation(job, token, signal) {
    const parsed = ConsolidationJobData.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`job ${job.id}: invalid payload: ${parsed.error.message}`);
    }
    const data = parsed.data;
    const space = options.findSpace(data.spaceId);
    if (space === undefined) {
      const age = now() - job.timestamp;
      if (token !== undefined && age < unknownSpacePatienceMs) {
        if (!handedBackSpaces.has(data.spaceId)) {
          handedBackSpaces.add(data.spaceId);
          options.logger.info(
            { jobId: job.id, spaceId: data.spaceId },
            'a job of a space this daemon does not serve; handing it back for the daemon that does (logged once per space)',
          );
        }
        const delay = Math.round(unknownSpaceDelayMs * (0.75 + random() * 0.5));
        await job.moveToDelayed(now() + delay, token);
        throw new DelayedError(`space "${data.spaceId}" is not served by this worker; handed back`);
      }
      throw new UnrecoverableError(
        `job ${job.id}: no worker on this Redis and prefix served space "${data.spaceId}" for ` +
          `${Math.round(age / 60_000)} min; add the space to a daemon's config (reloaded on SIGHUP), or give each ` +
          'configuration its own redisPrefix (DREAMD_REDIS_PREFIX)',
      );
    }
    const log = options.logger.child({ jobId: job.id, spaceId: space.id });

    const progress = createProgressReporter(
      (update) => job.updateProgress({ ...update }),
      (error) => log.warn({ err: error }, 'could not report progress'),
      progressDelayMs,
    );

    try {
      const summary = await consolidateWith(
        options.consolidate,
        space,
        data,
        job.id,
        progress.report,
        signal,
      );
      await progress.finish();
      log.info(
        { status: summary.status, added: summary.added, durationMs: summary.durationMs },
        'run finished',
      );
      // Redis keeps what the API and the dashboard show; the diff and long lists stay in the run record.
      return slimRunSummary(summary);
    } catch (error) {
      await progress.finish();
      if (error instanceof LockBusyError && token !== undefined) {
        const delay = Math.round(busyDelayMs * (0.75 + random() * 0.5));
        log.info({ holder: error.holder, delayMs: delay }, 'space is busy; trying again later');
        await job.moveToDelayed(now() + delay, token);
        throw new DelayedError(`space "${space.id}" is busy: ${error.message}`);
      }
      if (signal?.aborted === true && signal.reason === SHUTDOWN_REASON && token !== undefined) {
        log.warn('worker shutting down; handing the job back');
        await job.moveToWait(token);
        throw new WaitingError(`job ${job.id} handed back: ${SHUTDOWN_REASON}`);
      }
      if (error instanceof ConfigError || (error instanceof ModelError && !error.retryable)) {
        throw new UnrecoverableError(`space "${space.id}": ${errorMessage(error)}`);
      }
      throw error;
    }
  };
}

function consolidateWith(
  consolidate: ConsolidateFunction,
  space: Space,
  data: ConsolidationJobData,
  jobId: string | undefined,
  onProgress: (progress: RunProgress) => void,
  signal: AbortSignal | undefined,
): Promise<RunSummary> {
  return consolidate(
    space,
    { force: data.force, dryRun: data.dryRun, trigger: data.trigger, jobId },
    signal !== undefined ? { onProgress, signal } : { onProgress },
  );
}
