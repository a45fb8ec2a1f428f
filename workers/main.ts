/**
 * The main of a dreamd process that takes jobs: what `dreamd worker` runs (workers alone, on a shared Redis), and
 * `dreamd start` and `dreamd scheduler` with other roles. The CLI loads it only when one of those commands runs,
 * so `--help` and the short commands never load the daemon, the queue or the SDKs. The jobs themselves are run
 * by src/daemon/consolidation-processor.ts; everything they call is the library under src/.
 */
import type { Config } from '../src/config/schema.js';
import { loadConfig } from '../src/config/load.js';
import type { DaemonRoles } from '../src/daemon/daemon.js';
import { createLogger } from '../src/daemon/logger.js';
import { controlProcess } from '../src/daemon/signals.js';
import { createDreamd, type Dreamd } from '../src/dreamd.js';
import { ConfigError, ModelError } from '../src/errors.js';
import type { ModelProvider } from '../src/model/types.js';

/** What a daemon process takes from the command that starts it. */
export interface DaemonProcessContext {
  readonly io: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly cwd: string;
    /** Pretty logs on a terminal, JSON lines otherwise. */
    readonly isTty: boolean;
  };
  /** The config, loaded once (from --config, DREAMD_CONFIG or ./dreamd.config.json). */
  readonly config: () => Config;
}

/** The model at start-up; a missing key is a config problem of this command (exit 2), named as such. */
function modelOrExplain(dreamd: Dreamd): ModelProvider {
  try {
    return dreamd.model();
  } catch (error) {
    if (error instanceof ModelError && error.details.kind === 'missing-credentials') {
      throw new ConfigError(error.message, 'model.apiKey', { cause: error });
    }
    throw error;
  }
}

/** Runs the daemon with the given roles until SIGTERM/SIGINT; SIGHUP or a config change reloads spaces. */
export async function runDaemon(
  context: DaemonProcessContext,
  roles: DaemonRoles,
  configPath: string | undefined,
): Promise<void> {
  const { io } = context;
  const config = context.config();
  const logger = createLogger({ pretty: io.isTty });
  const dreamd = createDreamd({ getConfig: () => config, env: io.env, logger });
  // The model at start, so a missing key stops start-up with a clear error instead of failing every job.
  const model = roles.workers ? modelOrExplain(dreamd) : undefined;
  const daemon = dreamd.daemon({ roles });
  if (roles.workers) await dreamd.recoverSpaces();
  await daemon.start();
  // Signals are the process's before it says it runs: a SIGTERM sent on that line stops it gracefully.
  const stopped = new Promise<void>((resolve) => {
    controlProcess({
      daemon,
      logger,
      loadConfig: () => loadConfig({ path: configPath, env: io.env, cwd: io.cwd }),
      onStopped: () => resolve(),
    });
  });
  logger.info(
    {
      queue: daemon.queueKind,
      roles,
      spaces: config.spaces.map((space) => space.id),
      redis: daemon.redisUrl,
      api: daemon.address,
      model: model?.label,
    },
    'dreamd is running',
  );
  await stopped;
}
