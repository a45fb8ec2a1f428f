import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { restartOnlyChanges } from './daemon-start.js';

/**
 * The config a daemon has in effect: the one given (a reload replaces it) with the spaces discovery finds
 * added. The settings that need a restart (Redis, key prefix, state directory, server) keep their first values.
 */
export interface DaemonConfig {
  /** The config in effect. */
  readonly current: () => Config;
  /** The config as given, before discovery. */
  readonly given: () => Config;
  /** Discovers again; puts the spaces in effect when they changed. A failure is logged, the old spaces kept. */
  readonly refreshSpaces: () => Promise<void>;
  /** Takes a new config (see `Daemon.reload`). */
  readonly reload: (next: Config) => void;
}

export interface DaemonConfigOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** The config with the discovered spaces added (a config without `discover` as is). */
  readonly discover: (base: Config) => Promise<Config>;
  /** Called with a config about to be put in effect: throws to refuse it (a bad schedule), nothing changed. */
  readonly check: (next: Config) => void;
  /** Called once a config is in effect: the parts that follow it take it. */
  readonly applied: (next: Config) => void;
}

/** The spaces of two configs are the same: ids, folders, sources (discovered files included). */
function sameSpaces(left: Config, right: Config): boolean {
  return JSON.stringify(left.spaces) === JSON.stringify(right.spaces);
}

export function createDaemonConfig(options: DaemonConfigOptions): DaemonConfig {
  const { logger } = options;
  let given = options.config;
  let config = options.config;

  /** Puts a config in effect; the settings that need a restart keep their old values. */
  const apply = (next: Config, message: string): void => {
    const applied: Config = {
      ...next,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      stateDir: config.stateDir,
      server: config.server,
    };
    options.check(applied);
    config = applied;
    options.applied(applied);
    logger.info({ spaces: applied.spaces.map((space) => space.id) }, message);
  };

  const refreshSpaces = async (): Promise<void> => {
    if (given.discover === undefined) return;
    try {
      const next = await options.discover(given);
      if (!sameSpaces(next, config)) apply(next, 'discovered spaces changed');
    } catch (error) {
      logger.warn({ err: error }, 'discovery failed; the spaces found before stay in effect');
    }
  };

  return {
    current: () => config,
    given: () => given,
    refreshSpaces,
    reload: (next) => {
      given = next;
      const fixed = restartOnlyChanges(next, config);
      if (fixed.length > 0)
        logger.warn({ fields: fixed }, 'these settings change only on restart; kept the old values');
      // The spaces discovered so far stay until the next discovery (a run of one is not handed back meanwhile).
      const discovered =
        next.discover === undefined ? [] : config.spaces.filter((space) => space.repository !== undefined);
      apply({ ...next, spaces: [...next.spaces, ...discovered] }, 'config reloaded');
      if (next.discover !== undefined) void refreshSpaces();
    },
  };
}
