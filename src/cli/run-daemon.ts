/** The body of `dreamd start`, `worker` and `scheduler`, loaded only when one of them runs. */
import { loadConfig } from '../config/load.js';
import type { DaemonRoles } from '../daemon/daemon.js';
import { createLogger } from '../daemon/logger.js';
import { controlProcess } from '../daemon/signals.js';
import { createDreamd, type Dreamd } from '../dreamd.js';
import { ConfigError, ModelError } from '../errors.js';
import type { ModelProvider } from '../model/types.js';
import type { CommandContext } from './program.js';

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
  context: CommandContext,
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
  logger.info(
    {
      roles,
      spaces: config.spaces.map((space) => space.id),
      redis: daemon.redisUrl,
      api: daemon.address,
      model: model?.label,
    },
    'dreamd is running',
  );
  await new Promise<void>((resolve) => {
    controlProcess({
      daemon,
      logger,
      loadConfig: () => loadConfig({ path: configPath, env: io.env, cwd: io.cwd }),
      onStopped: () => resolve(),
    });
  });
}
