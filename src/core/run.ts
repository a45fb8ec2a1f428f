import type { Space } from '../config/schema.js';
import type { BudgetWait } from './budget.js';
import type { TokenUsage } from './usage.js';

/** What caused a run. */
export type RunTrigger = 'schedule' | 'manual' | 'api';

export interface RunRequest {
  /** Skip the time and session-count gates (never the lock). */
  readonly force: boolean;
  /** Compute and return the diff; write nothing. */
  readonly dryRun: boolean;
  readonly trigger: RunTrigger;
  /** BullMQ job id when the run comes from the queue, for the run record. */
  readonly jobId?: string | undefined;
}

export type RunPhase = 'orient' | 'gather' | 'extract' | 'reconcile' | 'write';

export interface RunProgress {
  readonly phase: RunPhase;
  /** Units done and total in this phase (sessions for gather, calls for extract, files for write). */
  readonly done: number;
  readonly total: number;
  readonly message?: string;
}

export interface RunSummary {
  readonly runId: string;
  readonly spaceId: string;
  /**
   * `completed` wrote memory; `skipped` found a gate closed (see `reason`); `dry-run` wrote nothing;
   * `lock-lost`: the run's lock was taken over while it worked (its heartbeat stopped longer than the stale
   * time), so it discarded its plan and wrote nothing (`reason` says who holds the lock); `sessions` are the
   * ones it would have consolidated, still pending.
   */
  readonly status: 'completed' | 'skipped' | 'dry-run' | 'lock-lost';
  readonly reason: string | undefined;
  /** Session ids consolidated (or that would be, for a dry run). */
  readonly sessions: readonly string[];
  readonly added: number;
  readonly updated: number;
  readonly superseded: number;
  readonly quarantined: number;
  readonly calls: number;
  /** Model requests retried after a fault or bad output, summed over the calls (0 when every call went through first time). */
  readonly retries: number;
  readonly usage: TokenUsage;
  readonly model: string;
  /**
   * USD the run's model calls cost, from the price table (`cost/prices.ts`) or `model.price`; undefined when
   * the model has no known price. 0 for a run without a call.
   */
  readonly costUsd?: number | undefined;
  /** Set on a skipped run that waits for something other than the gates (the monthly budget). */
  readonly waiting?: BudgetWait | undefined;
  readonly durationMs: number;
  /** Unified diff of the memory files (always for dry runs; also kept in history). */
  readonly diff: string;
  /** Files reported and set aside, with reasons. */
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
  /**
   * What happened besides plain calls: a session consolidated in part (`session X part 2 of ~N`), sessions
   * waiting for the call budget, answers that hit the output limit and were split.
   */
  readonly notes?: readonly string[] | undefined;
}

export interface RunOptions {
  readonly onProgress?: (progress: RunProgress) => void;
  readonly signal?: AbortSignal;
}

/** One consolidation run for one space: the function the CLI and the BullMQ worker call. */
export type ConsolidateFunction = (
  space: Space,
  request: RunRequest,
  options?: RunOptions,
) => Promise<RunSummary>;
