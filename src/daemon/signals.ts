import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Daemon } from './daemon.js';

export interface ProcessControlOptions {
  readonly daemon: Daemon;
  readonly logger: Logger;
  /** Reads and validates the config again (loadConfig); a throw keeps the old config. */
  readonly loadConfig: () => Config;
  /** Watch the config file and reload when it changes. Default: when the config came from a file. */
  readonly watchFile?: boolean;
  /** Called once the daemon stopped after SIGTERM/SIGINT; default sets process.exitCode = 0. */
  readonly onStopped?: (signal: NodeJS.Signals) => void;
}

/**
 * Connects a daemon to its process: SIGTERM and SIGINT stop it gracefully (a second signal exits at once with
 * code 1), SIGHUP and a change of the config file reload the config. Returns a function that removes the handlers.
 */
export function controlProcess(options: ProcessControlOptions): () => void {
  const { daemon, logger } = options;
  let stopping = false;

  const reload = (why: string): void => {
    try {
      daemon.reload(options.loadConfig());
    } catch (error) {
      logger.error({ err: error, why }, 'config not reloaded; the daemon keeps the previous one');
    }
  };

  const onStop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    daemon.stop().then(
      () => (options.onStopped ?? (() => (process.exitCode = 0)))(signal),
      (error: unknown) => {
        logger.error({ err: error }, 'stop failed');
        process.exitCode = 1;
      },
    );
  };
  const onHangup = (): void => reload('SIGHUP');
  const onTerminate = (): void => onStop('SIGTERM');
  const onInterrupt = (): void => onStop('SIGINT');

  process.on('SIGTERM', onTerminate);
  process.on('SIGINT', onInterrupt);
  process.on('SIGHUP', onHangup);

  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  const source = daemon.config.source;
  if ((options.watchFile ?? source !== undefined) && source !== undefined) {
    // The directory, not the file: editors save by writing a new file and renaming it over the old one, which
    // ends a watch on the old file. Saves come in bursts: wait 300 ms after the last event before reading.
    watcher = watch(dirname(source), (_event, filename) => {
      if (filename !== basename(source)) return;
      if (debounce !== undefined) clearTimeout(debounce);
      debounce = setTimeout(() => reload(`${source} changed`), 300);
    });
    watcher.on('error', (error) => logger.warn({ err: error, file: source }, 'cannot watch the config file'));
    watcher.unref();
  }

  return () => {
    process.off('SIGTERM', onTerminate);
    process.off('SIGINT', onInterrupt);
    process.off('SIGHUP', onHangup);
    if (debounce !== undefined) clearTimeout(debounce);
    watcher?.close();
  };
}
