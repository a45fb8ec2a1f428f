/**
 * `dreamd consolidate` with a daemon up: each space's run goes through the daemon's queue (so it obeys the
 * same one-run-per-space rule as scheduled runs and may run on any worker machine), and the command follows
 * the job until it ends, or returns at once with `--no-wait`.
 */
import type { Space } from '../config/schema.js';
import type { RunProgress, RunSummary } from '../core/run.js';
import { errorMessage } from '../errors.js';
import type { ConsolidateOutcome } from './consolidate-in-process.js';
import { jobSummary, type DaemonClient } from './daemon-client.js';
import { counted } from '../util/plural.js';

export interface ConsolidateQueuedOptions {
  readonly client: DaemonClient;
  readonly spaces: readonly Space[];
  readonly force: boolean;
  readonly dryRun: boolean;
  /** Follow each job to its end (default); false returns once the jobs are queued. */
  readonly wait: boolean;
  readonly pollIntervalMs?: number;
  readonly onStart?: (space: Space) => void;
  readonly onProgress?: (progress: RunProgress) => void;
  readonly onEnd?: (outcome: QueuedOutcome) => void;
}

/** A queued run's outcome: the same as in-process, plus the job id (and no summary yet with `--no-wait`). */
export type QueuedOutcome =
  | (ConsolidateOutcome & { readonly jobId?: string })
  | {
      readonly spaceId: string;
      readonly ok: true;
      readonly queued: true;
      readonly jobId: string;
      readonly duplicate: boolean;
    };

function isRunProgress(value: unknown): value is RunProgress {
  return (
    typeof value === 'object' && value !== null && 'phase' in value && 'done' in value && 'total' in value
  );
}

export async function consolidateQueued(options: ConsolidateQueuedOptions): Promise<QueuedOutcome[]> {
  const outcomes: QueuedOutcome[] = [];
  for (const space of options.spaces) {
    options.onStart?.(space);
    let outcome: QueuedOutcome;
    try {
      const queued = await options.client.enqueue(space.id, { force: options.force, dryRun: options.dryRun });
      if (!options.wait) {
        outcome = {
          spaceId: space.id,
          ok: true,
          queued: true,
          jobId: queued.jobId,
          duplicate: queued.status === 'duplicate',
        };
      } else {
        const view = await options.client.follow(queued.jobId, {
          ...(options.pollIntervalMs !== undefined ? { intervalMs: options.pollIntervalMs } : {}),
          onUpdate: (job) => {
            if (isRunProgress(job.progress)) options.onProgress?.(job.progress);
          },
        });
        const summary: RunSummary | undefined = jobSummary(view);
        outcome =
          view.state === 'completed' && summary !== undefined
            ? { spaceId: space.id, ok: true, summary, jobId: queued.jobId }
            : {
                spaceId: space.id,
                ok: false,
                jobId: queued.jobId,
                error: {
                  name: 'JobFailed',
                  message: `job ${queued.jobId} ${view.state} after ${counted(view.attemptsMade, 'attempt')}: ${view.failedReason ?? 'no reason given'}`,
                },
              };
      }
    } catch (error) {
      outcome = {
        spaceId: space.id,
        ok: false,
        error: { name: (error as Error).name ?? 'Error', message: errorMessage(error) },
      };
    }
    options.onEnd?.(outcome);
    outcomes.push(outcome);
  }
  return outcomes;
}
