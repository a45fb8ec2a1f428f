/**
 * `dreamd consolidate` without a daemon: runs each space's consolidation in this process, one after the
 * other. Queueing to a running daemon is a separate path: a function beside this one that returns the same
 * `ConsolidateOutcome`s, so the command can pick either.
 */
import type { Space } from '../config/schema.js';
import type { RunOptions, RunRequest, RunSummary } from '../core/run.js';
import type { Dreamd } from '../dreamd.js';
import { LockBusyError, errorMessage } from '../errors.js';

/** What became of one space's run. */
export type ConsolidateOutcome =
  | { readonly spaceId: string; readonly ok: true; readonly summary: RunSummary }
  | {
      readonly spaceId: string;
      readonly ok: false;
      readonly error: {
        readonly name: string;
        readonly message: string;
        /** For a busy space: who holds its lock. */
        readonly holder?: { owner: string; pid: number; host: string; startedAt: string } | undefined;
      };
    };

export interface ConsolidateInProcessOptions {
  /** The composition root: its consolidator and model, on the live config. */
  readonly dreamd: Dreamd;
  /** Spaces to run, in order. */
  readonly spaces: readonly Space[];
  readonly force: boolean;
  readonly dryRun: boolean;
  /** Send the independent calls as a message batch and wait for it here (`--batch`). */
  readonly batch?: boolean | undefined;
  /** Progress of each space's run. */
  readonly onStart?: (space: Space) => void;
  readonly onProgress?: RunOptions['onProgress'];
  readonly onEnd?: (outcome: ConsolidateOutcome) => void;
  readonly signal?: AbortSignal;
}

/**
 * Runs the spaces in turn. A busy space (LockBusyError) or a failed run is reported in its outcome and the
 * next space still runs; only a problem that concerns every space (no model credentials: ModelError `missing-credentials`) throws.
 */
export async function consolidateInProcess(
  options: ConsolidateInProcessOptions,
): Promise<ConsolidateOutcome[]> {
  // The model once before any space is touched: a missing key fails the command before any work.
  options.dreamd.model();
  const consolidate = options.dreamd.consolidate;
  const request: RunRequest = {
    force: options.force,
    dryRun: options.dryRun,
    trigger: 'manual',
    ...(options.batch === true ? { batch: true } : {}),
  };
  const runOptions: RunOptions = {
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  const outcomes: ConsolidateOutcome[] = [];
  for (const space of options.spaces) {
    options.onStart?.(space);
    let outcome: ConsolidateOutcome;
    try {
      outcome = { spaceId: space.id, ok: true, summary: await consolidate(space, request, runOptions) };
    } catch (error) {
      outcome = {
        spaceId: space.id,
        ok: false,
        error: {
          name: error instanceof Error ? error.name : 'Error',
          message: errorMessage(error),
          ...(error instanceof LockBusyError ? { holder: error.holder } : {}),
        },
      };
    }
    options.onEnd?.(outcome);
    outcomes.push(outcome);
  }
  return outcomes;
}
