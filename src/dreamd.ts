/**
 * The composition root: the one place that builds dreamd's pipeline (model, consolidator, inspector) and the
 * daemon around it (queue, scheduler, workers, server), in the manner of pg-boss's constructor. The CLI, the
 * daemon and library users all start here; nothing else constructs these parts.
 *
 * Everything reads the live config: `getConfig` is called at the start of every run and inspection, and a daemon
 * built here feeds its reloaded config back, so a reload (gates, limits, model settings) reaches the next run.
 * The model is created on first use and again whenever `config.model` changes; it logs each retry to the
 * daemon's logger, and each run's summary counts them.
 */
import type { Logger } from 'pino';
import type { Config, ModelConfig, Space } from './config/schema.js';
import type { InspectSpaceFunction } from './core/inspection.js';
import type { ConsolidateFunction } from './core/run.js';
import {
  createInspectReads,
  inspectSpaceDetailed,
  type DetailedInspection,
} from './consolidation/inspect.js';
import { createConsolidator, type RunStep } from './consolidation/run.js';
import { createDaemon, type CreateDaemonOptions, type Daemon } from './daemon/daemon.js';
import { createLogger } from './daemon/logger.js';
import { withDiscoveredSpaces } from './discovery/index.js';
import { recoverSpace, type RecoverSpaceOutcome } from './space/recover-space.js';
import { createModel } from './model/create-model.js';
import type { ProviderOptions } from './model/provider-options.js';
import type { ModelProvider } from './model/types.js';

export interface CreateDreamdOptions {
  /** The live config; called whenever a part needs it. Pass `() => config` for a fixed one. */
  readonly getConfig: () => Config;
  /** Environment (REDIS_URL, PATH …). Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where every part logs (the model's retries included). Default a pino logger (`createLogger`). */
  readonly logger?: Logger;
  /** The clock of runs, gates and the scheduler. Default the system clock. */
  readonly now?: () => Date;
  /** Model transport and tuning (a custom fetch, retry delays); the logger is always dreamd's. */
  readonly modelOptions?: Omit<ProviderOptions, 'logger'>;
  /** Lock owner shown in status. Default `dreamd <pid>@<host>`. */
  readonly owner?: string;
  /** Test hook: called at each named step of a run (see `RunStep`); throw there to simulate a crash. */
  readonly faultInjection?: (step: RunStep) => void;
}

/** Options of `dreamd.daemon()`: what `createDaemon` takes beyond the parts built here. */
export type DreamdDaemonOptions = Omit<
  CreateDaemonOptions,
  'config' | 'consolidate' | 'inspectSpace' | 'logger' | 'env' | 'now'
>;

export interface Dreamd {
  readonly logger: Logger;
  /** The config in effect: the daemon's once one is built here (it changes on reload), else `getConfig()`. */
  config(): Config;
  /**
   * The model of the config in effect, created on first use and again when `config.model` changes. Missing
   * credentials throw ModelError `missing-credentials`.
   */
  model(): ModelProvider;
  /** One consolidation run of one space, with the config in effect at its start. */
  readonly consolidate: ConsolidateFunction;
  /** The scheduler's cheap look at a space. */
  readonly inspectSpace: InspectSpaceFunction;
  /** The inspection and the scan behind it (status, `sessions list`). */
  inspectSpaceDetailed(space: Space): Promise<DetailedInspection>;
  /**
   * Finishes, under each space's lock, any commit an earlier process left half done, so nothing reads a folder
   * in the middle of a transaction. `dreamd start` calls it before the daemon starts; a busy or unwritable
   * space is logged and left for its next run.
   */
  recoverSpaces(): Promise<readonly { readonly spaceId: string; readonly outcome: RecoverSpaceOutcome }[]>;
  /** Builds the daemon (not started). Its reloads become the config every part reads. One per Dreamd. */
  daemon(options?: DreamdDaemonOptions): Daemon;
}

export function createDreamd(options: CreateDreamdOptions): Dreamd {
  const logger = options.logger ?? createLogger();
  const now = options.now ?? (() => new Date());
  let daemon: Daemon | undefined;
  const config = (): Config => daemon?.config ?? options.getConfig();

  let model: { readonly settings: string; readonly provider: ModelProvider } | undefined;
  const currentModel = (): ModelProvider => {
    const modelConfig: ModelConfig = config().model;
    const settings = JSON.stringify(modelConfig);
    if (model?.settings !== settings) {
      model = { settings, provider: createModel(modelConfig, { ...options.modelOptions, logger }) };
      if (daemon !== undefined) logger.info({ model: model.provider.label }, 'model settings in effect');
    }
    return model.provider;
  };

  const consolidate = createConsolidator({
    config,
    model: currentModel,
    now,
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.faultInjection !== undefined ? { faultInjection: options.faultInjection } : {}),
  });
  // The scheduler inspects every space each tick: ledgers and run records are parsed again only when changed.
  const reads = createInspectReads();
  const detailed = (space: Space): Promise<DetailedInspection> =>
    inspectSpaceDetailed(space, { config, now, reads });

  return {
    logger,
    config,
    model: currentModel,
    consolidate,
    inspectSpace: async (space) => (await detailed(space)).inspection,
    inspectSpaceDetailed: detailed,
    async recoverSpaces() {
      // Before a daemon exists its discovered spaces are not in the config yet: they are found here.
      const current = daemon === undefined ? await withDiscoveredSpaces(config()) : config();
      return Promise.all(
        current.spaces.map(async (space) => {
          const outcome = await recoverSpace(space.memoryDir, {
            staleMs: current.limits.lockStaleMinutes * 60_000,
            space: space.id,
            now,
          });
          if (outcome.status === 'recovered')
            logger.info({ spaceId: space.id, ...outcome }, 'finished an interrupted commit');
          else if (outcome.status !== 'clean')
            logger.warn({ spaceId: space.id, ...outcome }, 'could not check for an interrupted commit');
          return { spaceId: space.id, outcome };
        }),
      );
    },
    daemon(daemonOptions = {}) {
      if (daemon !== undefined) throw new Error('this Dreamd already built its daemon');
      daemon = createDaemon({
        ...daemonOptions,
        config: options.getConfig(),
        consolidate,
        inspectSpace: async (space) => (await detailed(space)).inspection,
        logger,
        now,
        ...(options.env !== undefined ? { env: options.env } : {}),
      });
      return daemon;
    },
  };
}
