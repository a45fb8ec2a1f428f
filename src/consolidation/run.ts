/**
 * One consolidation run for one space: gates → orient → gather → extract → reconcile → write.
 *
 * States of a run: `locked` (lock taken, an interrupted earlier run finished or discarded; a dry run takes no
 * lock) → `gated` (closed: skipped, nothing written) → `gathered` (digests built) → `extracted` (model answered
 * for every batch; a model failure ends the run here, nothing written, sessions stay pending) → `reconciled`
 * → `committed` (memory, quarantine, ledger and run record moved into place by one staged transaction) → lock
 * released. The lock's heartbeat runs from `locked` to the end; just before the commit point the run checks
 * that the lock is still its own (the fence): a run that lost it (paused longer than the stale time, taken
 * over) discards its plan and ends `lock-lost`, nothing written, its sessions pending. A retried run is
 * idempotent: sessions the ledger already holds are not read again. The call budget is spent in extraction;
 * a session it cuts is consolidated up to the first message not sent and continues next run (ledger progress).
 *
 * Each step is a file of its own, and passes the run's state on to the next (`RunContext` for what is fixed
 * at the start): `locks-run.ts`, `orient-run.ts`, `gates-run.ts`, `gather-run.ts`, `extract-run.ts`,
 * `reconcile-run.ts`, `summarize-run.ts`, `write-run.ts`.
 */
import { hostname } from 'node:os';
import type { Config, Space } from '../config/schema.js';
import { costMeterOf } from '../model/cost-meter.js';
import { ConfigError } from '../errors.js';
import { newRunId, type HeartbeatTimer } from '../space/index.js';
import type { ModelProvider } from '../model/types.js';
import type { ConsolidateFunction, RunOptions, RunRequest, RunSummary } from '../core/run.js';
import { consolidateWithBatches, type BatchStage } from './batch/batch.js';
import type { CostOf } from './extraction/extract-tally.js';
import { extractStep, submitStep } from './extract-run.js';
import { gatherStep } from './gather-run.js';
import { awaitingProposal, collectStillDue, stopBeforeGather } from './gates-run.js';
import { checkSessionsDir, readSpaceState, scanNewSessions } from './orient-run.js';
import { reconcileStep } from './reconcile-run.js';
import type { RunContext, RunStep } from './run-context.js';
import { releaseRunLocks, takeRunLocks, type RunLocks } from './locks-run.js';
import { summarizeStep } from './summarize-run.js';
import { writeStep } from './write-run.js';

export { MEMORY_LIST_MAX_FACTS } from './extraction/extract.js';
export type { RunStep } from './run-context.js';
export { describeWaiting } from './run-end.js';

export interface ConsolidatorOptions {
  /**
   * The config, or a function returning the live one: read at the start of every run, so a reload (gates,
   * limits, model settings) reaches the next run. `createDreamd` passes its `getConfig`.
   */
  readonly config: Config | (() => Config);
  /** The model, or a factory called on the first run that needs one (a missing key fails that run only). */
  readonly model: ModelProvider | (() => ModelProvider);
  readonly now?: () => Date;
  /** Lock owner shown in status, e.g. "worker 12345". Default `dreamd <pid>@<host>`. */
  readonly owner?: string;
  /** Schedules the space lock's heartbeat; default `setInterval` (see HeartbeatTimer). */
  readonly lockTimer?: HeartbeatTimer;
  /** Test hook: called at each named step; throw (or kill the process) to simulate a crash there. */
  readonly faultInjection?: (step: RunStep) => void;
}

/** The price of the config's model; a budget on a model with no known price is a ConfigError. */
function pricing(config: Config): CostOf | undefined {
  const meter = costMeterOf(config.model);
  if (!meter.priced && config.limits.monthlyBudgetUsd !== undefined) {
    throw new ConfigError(
      `limits.monthlyBudgetUsd is set but model ${config.model.name} has no known price: set model.price ` +
        '(USD per million input and output tokens) in dreamd.config.json',
      'model.price',
    );
  }
  // The model port's meter, as every provider prices its calls (chat calls included).
  return meter.priced ? (usage, batched) => meter(usage, { batch: batched === true }) ?? 0 : undefined;
}

/** Creates the function the CLI and the workers call to consolidate one space. */
export function createConsolidator(options: ConsolidatorOptions): ConsolidateFunction {
  const readConfig = typeof options.config === 'function' ? options.config : () => options.config as Config;
  const now = options.now ?? (() => new Date());
  const holder = { owner: options.owner ?? `dreamd ${process.pid}@${hostname()}`, timer: options.lockTimer };
  let model: ModelProvider | undefined = typeof options.model === 'function' ? undefined : options.model;
  const getModel = (): ModelProvider => (model ??= (options.model as () => ModelProvider)());
  const inject = options.faultInjection ?? (() => undefined);
  pricing(readConfig()); // at creation too, so a daemon with such a config stops at start

  /** The run under the locks; `stage` says what it does about a message batch (see batch.ts). */
  async function runLocked(
    space: Space,
    request: RunRequest,
    runOptions: RunOptions,
    stage: BatchStage | undefined,
  ): Promise<RunSummary> {
    const config = readConfig();
    const costOf = pricing(config);
    const started = Date.now();
    const ctx: RunContext = {
      space,
      request,
      runOptions,
      stage,
      config,
      costOf,
      runId: newRunId(now()),
      now,
      model: getModel,
      inject,
      progress: (update) => runOptions.onProgress?.(update),
      elapsed: () => Date.now() - started,
    };
    const locks = await takeRunLocks(ctx, holder);
    try {
      return await runSteps(ctx, locks);
    } finally {
      await releaseRunLocks(locks);
    }
  }

  return async function consolidate(
    space: Space,
    request: RunRequest,
    runOptions: RunOptions = {},
  ): Promise<RunSummary> {
    await checkSessionsDir(space);
    return consolidateWithBatches(space, request, runOptions, {
      config: readConfig(),
      model: getModel,
      now,
      run: (stage) => runLocked(space, request, runOptions, stage),
    });
  };
}

/** The steps of a run under its locks, in order; each may end the run with its summary. */
async function runSteps(ctx: RunContext, locks: RunLocks): Promise<RunSummary> {
  const notDue = await collectStillDue(ctx);
  if (notDue !== undefined) return notDue;
  ctx.progress({ phase: 'orient', done: 0, total: 1 });
  const state = await readSpaceState(ctx);
  const waiting = awaitingProposal(ctx, state);
  if (waiting !== undefined) return waiting;
  const oriented = await scanNewSessions(ctx, state);
  const stopped = await stopBeforeGather(ctx, oriented);
  if (stopped !== undefined) return stopped;
  ctx.progress({ phase: 'orient', done: 1, total: 1 });
  ctx.inject('after-orient');

  const gathered = await gatherStep(ctx, oriented);
  const submitted = ctx.stage?.kind === 'submit' ? await submitStep(ctx, gathered) : undefined;
  if (submitted !== undefined && 'summary' in submitted) return submitted.summary;
  const extracted = await extractStep(ctx, gathered, submitted?.note);
  const reconciled = await reconcileStep(ctx, extracted);
  return writeStep(ctx, locks, summarizeStep(ctx, reconciled));
}
