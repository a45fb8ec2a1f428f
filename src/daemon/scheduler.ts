import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { checkSchedule } from '../config/schedule.js';
import { errorMessage } from '../errors.js';
import { evaluateGates } from '../core/gates.js';
import type { InspectSpaceFunction, SpaceInspection } from '../core/inspection.js';
import type { JobQueue } from './jobs.js';

/** What one tick decided for one space. */
export type SpaceTickResult =
  | { readonly spaceId: string; readonly outcome: 'enqueued' | 'already-queued'; readonly jobId: string }
  | { readonly spaceId: string; readonly outcome: 'gates-closed'; readonly reasons: readonly string[] }
  | { readonly spaceId: string; readonly outcome: 'error'; readonly error: string };

export interface TickReport {
  /** ISO time of the tick. */
  readonly at: string;
  readonly spaces: readonly SpaceTickResult[];
}

export interface CreateSchedulerOptions {
  readonly config: Config;
  /** Where open spaces are queued: BullMQ on Redis or the embedded queue. */
  readonly jobs: JobQueue;
  readonly inspectSpace: InspectSpaceFunction;
  /** The clock; injected so tests decide what time a tick sees. */
  readonly now: () => Date;
  readonly logger: Logger;
  /**
   * Called at the start of every tick, before the spaces are read (the daemon looks for new repositories
   * there: `discover`); it may `reload` the scheduler. Must not throw.
   */
  readonly beforeTick?: () => Promise<void>;
  /** Called with every inspection a tick makes (e.g. to set the pending-sessions gauge). */
  readonly onInspected?: (inspection: SpaceInspection) => void;
}

export type SchedulerState = 'stopped' | 'started';

export interface Scheduler {
  readonly state: SchedulerState;
  /** Starts the cron tick (`config.schedule`). */
  start(): void;
  /** Stops the cron tick and waits for a tick in progress. */
  stop(): Promise<void>;
  /**
   * Evaluates every space's gates once and enqueues those that are open. Concurrent calls share one tick.
   * Gates are state, not events: a tick missed while the daemon was down loses nothing, the next one sees the
   * same sessions waiting.
   */
  tick(): Promise<TickReport>;
  /** Takes a new config: spaces added or removed, a new schedule (the cron task is replaced). */
  reload(config: Config): void;
}

/**
 * The scheduler: a node-cron tick that turns open gates into `consolidation-requested` jobs.
 *
 * States: stopped → started (cron task scheduled; ticks run) → stopped. `tick()` works in both states.
 * Several replicas may run on one Redis: the queue's deduplication by space id makes their enqueues of one space
 * collapse into one job.
 */
export function createScheduler(options: CreateSchedulerOptions): Scheduler {
  const logger = options.logger.child({ component: 'scheduler' });
  let config = options.config;
  let task: ScheduledTask | undefined;
  let running: Promise<TickReport> | undefined;

  const evaluateSpace = async (spaceIndex: number): Promise<SpaceTickResult> => {
    const space = config.spaces[spaceIndex]!;
    try {
      const inspection = await options.inspectSpace(space);
      options.onInspected?.(inspection);
      const decision = evaluateGates({ inspection, gates: config.gates, now: options.now(), force: false });
      if (!decision.open) return { spaceId: space.id, outcome: 'gates-closed', reasons: decision.reasons };
      const result = await options.jobs.enqueue(
        space.id,
        { force: false, dryRun: false, trigger: 'schedule' },
        { workers: config.workers, now: options.now() },
      );
      const outcome = result.status === 'queued' ? 'enqueued' : 'already-queued';
      logger.info({ spaceId: space.id, jobId: result.jobId, outcome }, 'gates open');
      return { spaceId: space.id, outcome, jobId: result.jobId };
    } catch (error) {
      logger.warn({ spaceId: space.id, err: error }, 'space could not be evaluated; the others carry on');
      return { spaceId: space.id, outcome: 'error', error: errorMessage(error) };
    }
  };

  const runTick = async (): Promise<TickReport> => {
    await options.beforeTick?.();
    const at = options.now().toISOString();
    // Spaces are evaluated one after another: the check is a directory listing and a ledger read each, and
    // sequential work keeps a tick over hundreds of spaces from opening hundreds of files at once.
    const spaces: SpaceTickResult[] = [];
    for (let index = 0; index < config.spaces.length; index++) spaces.push(await evaluateSpace(index));
    return { at, spaces };
  };

  const tick = (): Promise<TickReport> => {
    running ??= runTick().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = (): void => {
    checkSchedule(config);
    task = cron.schedule(
      config.schedule,
      async () => {
        const report = await tick();
        logger.debug({ report }, 'tick');
      },
      { noOverlap: true, name: 'dreamd-scheduler' },
    );
  };

  const unschedule = async (): Promise<void> => {
    const current = task;
    task = undefined;
    await current?.destroy();
  };

  return {
    get state() {
      return task === undefined ? 'stopped' : 'started';
    },
    start() {
      if (task === undefined) schedule();
    },
    async stop() {
      await unschedule();
      await running;
    },
    tick,
    reload(next) {
      checkSchedule(next);
      const scheduleChanged = next.schedule !== config.schedule;
      config = next;
      if (scheduleChanged && task !== undefined) {
        const previous = task;
        schedule();
        void Promise.resolve(previous.destroy()).catch((error: unknown) =>
          logger.warn({ err: error }, 'old tick'),
        );
      }
    },
  };
}
