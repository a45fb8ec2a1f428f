/**
 * What every step of one consolidation run reads: the space and request, the config as read at its start,
 * its id and clock, the model, its batch stage, and the hooks for progress and test crashes.
 */
import type { Config, Space } from '../config/schema.js';
import type { CommitStep } from '../space/index.js';
import type { ModelProvider } from '../model/types.js';
import type { RunOptions, RunProgress, RunRequest } from '../core/run.js';
import type { BatchStage } from './batch/batch.js';
import type { CostOf } from './extraction/extract-tally.js';

/** Named points of a run where a test may inject a crash (in addition to the commit's own steps). */
export type RunStep =
  'after-orient' | 'after-digest' | 'after-batch-submit' | 'after-extraction' | `commit:${CommitStep}`;

/** One run, as its steps see it. */
export interface RunContext {
  readonly space: Space;
  readonly request: RunRequest;
  readonly runOptions: RunOptions;
  /** What the run does about a message batch (see batch.ts); undefined: nothing. */
  readonly stage: BatchStage | undefined;
  /** The config as read at the start of the run: a reload reaches the next run. */
  readonly config: Config;
  /** The price of a call's usage; undefined when the model has no known price. */
  readonly costOf: CostOf | undefined;
  readonly runId: string;
  readonly now: () => Date;
  /** The model, created on the first call that needs it (a missing key fails that run only). */
  readonly model: () => ModelProvider;
  /** Test hook: called at each named step. */
  readonly inject: (step: RunStep) => void;
  readonly progress: (update: RunProgress) => void;
  /** Milliseconds since the run started. */
  readonly elapsed: () => number;
}
