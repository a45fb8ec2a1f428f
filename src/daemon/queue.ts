import { randomUUID } from 'node:crypto';
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { WorkersConfig } from '../config/schema.js';
import { CONSOLIDATION_JOB, CONSOLIDATION_QUEUE, ConsolidationJobData } from '../core/jobs.js';
import type { RunSummary, RunTrigger } from '../core/run.js';

export type ConsolidationQueue = Queue<ConsolidationJobData, RunSummary, typeof CONSOLIDATION_JOB>;

/**
 * How long finished jobs stay in Redis (for `dreamd status`, /spaces/:id and the dashboard). Eviction is
 * best-effort: BullMQ trims when the next job of the same kind finishes.
 */
export const JOB_RETENTION = {
  /** Completed runs: a week, at most 1000. A run a day per space keeps a week of history for ~140 spaces. */
  removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
  /** Failed runs: 30 days, at most 5000, so a failure seen on Monday is still there to debug on Friday. */
  removeOnFail: { age: 30 * 24 * 3600, count: 5000 },
} as const;

/**
 * Jitter of the retry backoff: each delay is drawn uniformly in [50 %, 100 %] of 2^(attempt-1) × backoffMs, so
 * workers that failed together (model outage) do not retry together.
 */
export const BACKOFF_JITTER = 0.5;

/**
 * BullMQ connection options for a Redis URL. `maxRetriesPerRequest: null` is what BullMQ requires (its blocking
 * commands wait indefinitely); reconnects back off 200 ms, 400 ms … capped at 2 s so a restarted Redis is found
 * again within 2 s.
 */
export function connectionOptions(url: string): ConnectionOptions {
  return {
    url,
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(times * 200, 2_000),
  };
}

export interface CreateQueueOptions {
  readonly connection: ConnectionOptions;
  /** Redis key prefix (`config.redisPrefix`). */
  readonly prefix: string;
}

export function createConsolidationQueue({ connection, prefix }: CreateQueueOptions): ConsolidationQueue {
  return new Queue<ConsolidationJobData, RunSummary, typeof CONSOLIDATION_JOB>(CONSOLIDATION_QUEUE, {
    connection,
    prefix,
  });
}

/** Job options of a consolidation job: retries, backoff and retention. */
export function consolidationJobOptions(spaceId: string, workers: WorkersConfig): JobsOptions {
  return {
    jobId: randomUUID(),
    // No ttl: the key lives while the job is waiting, delayed or active and is released when it completes or
    // fails for good. Several schedulers, the API and the CLI therefore never queue one space twice.
    deduplication: { id: spaceId },
    attempts: workers.attempts,
    backoff: { type: 'exponential', delay: workers.backoffMs, jitter: BACKOFF_JITTER },
    ...JOB_RETENTION,
  };
}

export interface EnqueueRequest {
  readonly force: boolean;
  readonly dryRun: boolean;
  readonly trigger: RunTrigger;
}

export type EnqueueResult =
  /** A new job was queued. */
  | { readonly status: 'queued'; readonly jobId: string }
  /** A job for this space was already waiting, delayed or running: that one is returned, nothing was added. */
  | { readonly status: 'duplicate'; readonly jobId: string };

/**
 * Queues a run of one space, unless one is already queued or running (BullMQ deduplication keyed by space id).
 * A duplicate is detected by the job id: we ask for a fresh UUID and BullMQ answers with the existing job's id.
 */
export async function enqueueConsolidation(
  queue: ConsolidationQueue,
  spaceId: string,
  request: EnqueueRequest,
  options: { readonly workers: WorkersConfig; readonly now: Date },
): Promise<EnqueueResult> {
  const data = ConsolidationJobData.parse({
    spaceId,
    force: request.force,
    dryRun: request.dryRun,
    trigger: request.trigger,
    requestedAt: options.now.toISOString(),
  });
  const jobOptions = consolidationJobOptions(spaceId, options.workers);
  const job = await queue.add(CONSOLIDATION_JOB, data, jobOptions);
  if (job.id === undefined) throw new Error(`BullMQ returned no job id for space "${spaceId}"`);
  return job.id === jobOptions.jobId
    ? { status: 'queued', jobId: job.id }
    : { status: 'duplicate', jobId: job.id };
}
