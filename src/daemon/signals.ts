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
  /**
   * How long a SIGHUP waits for a SIGCONT before it reloads, in ms. Default 100 ms: the kernel sends SIGHUP and
   * SIGCONT together to a stopped process whose process group was orphaned (its shell went away), and the two
   * reach the event loop within a few milliseconds of each other. That SIGHUP is not a request to reload.
   */
  readonly hangupGraceMs?: number;
}

/** A SIGCONT this close to a SIGHUP, before or after it, makes that SIGHUP the orphaned-group one. */
const CONTINUE_WINDOW_MS = 1_000;

/**
 * Connects a daemon to its process: SIGTERM and SIGINT stop it gracefully (a second signal exits at once with
 * code 1), SIGHUP and a change of the config file reload the config (a SIGHUP that comes with a SIGCONT is the
 * kernel's to an orphaned stopped process, not a person's, and reloads nothing). Returns a function that removes the handlers.
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
  const graceMs = options.hangupGraceMs ?? 100;
  let continuedAt = Number.NEGATIVE_INFINITY;
  const hangups = new Set<NodeJS.Timeout>();
  const onContinue = (): void => {
    continuedAt = Date.now();
    logger.info('continued after being stopped (SIGCONT)');
  };
  const onHangup = (): void => {
    const receivedAt = Date.now();
    const timer = setTimeout(() => {
      hangups.delete(timer);
      if (Math.abs(continuedAt - receivedAt) <= CONTINUE_WINDOW_MS) {
        logger.info(
          'SIGHUP came with SIGCONT: the process was stopped and its process group orphaned; not a reload request',
        );
        return;
      }
      reload('SIGHUP');
    }, graceMs);
    hangups.add(timer);
  };
  const onTerminate = (): void => onStop('SIGTERM');
  const onInterrupt = (): void => onStop('SIGINT');

  process.on('SIGTERM', onTerminate);
  process.on('SIGINT', onInterrupt);
  process.on('SIGHUP', onHangup);
  process.on('SIGCONT', onContinue);

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
    process.off('SIGCONT', onContinue);
    for (const timer of hangups) clearTimeout(timer);
    if (debounce !== undefined) clearTimeout(debounce);
    watcher?.close();
  };
}
