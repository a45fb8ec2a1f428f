/**
 * The queue as the scheduler, the HTTP API and the metrics see it: queue a run of a space (one per space at a
 * time), and read jobs back. Two implementations: BullMQ on Redis (`bullmqJobs`, for several processes or
 * machines) and the embedded in-process queue (`createEmbeddedQueue`, the default when there is no Redis).
 */
import type { WorkersConfig } from '../config/schema.js';
import type { RunSummary } from '../core/run.js';
import {
  enqueueConsolidation,
  type ConsolidationQueue,
  type EnqueueRequest,
  type EnqueueResult,
} from './queue.js';

/** Where a job is. `prioritized` exists only in BullMQ; the embedded queue never uses it. */
export const JOB_STATES = ['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** One job as the API shows it. */
export interface JobView {
  readonly id: string;
  readonly spaceId: string;
  readonly trigger: string;
  readonly state: JobState;
  /** The run's latest progress (phase, done, total), or 0 before the first report. */
  readonly progress: unknown;
  readonly attemptsMade: number;
  readonly failedReason: string | undefined;
  readonly summary: RunSummary | undefined;
  /** ISO time the job finished (completed or failed). */
  readonly finishedAt: string | undefined;
}

export interface JobQueue {
  /** `redis`: BullMQ, shared by every process on that Redis; `embedded`: this process only. */
  readonly kind: 'redis' | 'embedded';
  /** Queues a run of a space unless one is already waiting, delayed or running (then that one's id). */
  enqueue(
    spaceId: string,
    request: EnqueueRequest,
    options: { readonly workers: WorkersConfig; readonly now: Date },
  ): Promise<EnqueueResult>;
  /** The job of a space's deduplication key: waiting, delayed or running (BullMQ: or just finished), if any. */
  currentJob(spaceId: string): Promise<{ readonly id: string; readonly state: JobState } | null>;
  getJob(id: string): Promise<JobView | undefined>;
  /** Finished jobs (completed and failed), newest first, at most `limit`. */
  finished(limit: number): Promise<JobView[]>;
  /** Failed jobs, newest first, at most `limit`. */
  failed(limit: number): Promise<JobView[]>;
  /** Jobs by state. */
  counts(): Promise<Record<JobState, number>>;
}

type BullJob = NonNullable<Awaited<ReturnType<ConsolidationQueue['getJob']>>>;

function viewOf(job: BullJob, state: JobState): JobView {
  return {
    id: job.id ?? '',
    spaceId: job.data.spaceId,
    trigger: job.data.trigger,
    state,
    progress: job.progress,
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason || undefined,
    summary: job.returnvalue ?? undefined,
    finishedAt: job.finishedOn !== undefined ? new Date(job.finishedOn).toISOString() : undefined,
  };
}

function knownState(state: string): JobState | undefined {
  return (JOB_STATES as readonly string[]).includes(state) ? (state as JobState) : undefined;
}

/** The BullMQ queue behind the `JobQueue` interface. */
export function bullmqJobs(queue: ConsolidationQueue): JobQueue {
  return {
    kind: 'redis',
    enqueue: (spaceId, request, options) => enqueueConsolidation(queue, spaceId, request, options),
    async currentJob(spaceId) {
      const jobId = await queue.getDeduplicationJobId(spaceId);
      if (jobId === null) return null;
      const state = knownState(await queue.getJobState(jobId));
      return state === undefined ? null : { id: jobId, state };
    },
    async getJob(id) {
      const job = await queue.getJob(id);
      if (job === undefined) return undefined;
      const state = knownState(await job.getState());
      return state === undefined ? undefined : viewOf(job, state);
    },
    async finished(limit) {
      const jobs = await queue.getJobs(['completed', 'failed'], 0, limit - 1);
      return jobs
        .filter((job) => job.finishedOn !== undefined)
        .sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))
        .map((job) => viewOf(job, job.failedReason ? 'failed' : 'completed'));
    },
    async failed(limit) {
      return (await queue.getFailed(0, limit - 1)).map((job) => viewOf(job, 'failed'));
    },
    async counts() {
      const counts = await queue.getJobCounts(...JOB_STATES);
      return Object.fromEntries(JOB_STATES.map((state) => [state, counts[state] ?? 0])) as Record<
        JobState,
        number
      >;
    },
  };
}
