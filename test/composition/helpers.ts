import type { Logger } from 'pino';
import type { Config } from '../../src/config/schema.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { createDreamd, type DreamdDaemonOptions } from '../../src/dreamd.js';
import { listRuns } from '../../src/space/index.js';
import { eventually } from '../support/eventually.js';

// Shared by the composition tests: daemons built by createDreamd, the one wiring point.

/** Well after the copies' mtimes, so every session is settled. */
export const later = (): Date => new Date(Date.now() + 6 * 3600_000);

/**
 * Runs `use` with a started daemon that createDreamd builds over `config` on the clock `later` (no HTTP server,
 * no tick at start; `options` over that), and stops it after, whatever `use` did.
 */
export async function withDaemon(
  config: Config,
  logger: Logger,
  use: (daemon: Daemon) => Promise<void>,
  options: DreamdDaemonOptions = {},
): Promise<void> {
  const daemon = createDreamd({ getConfig: () => config, logger, now: later }).daemon({
    roles: { server: false },
    tickOnStart: false,
    ...options,
  });
  await daemon.start();
  try {
    await use(daemon);
  } finally {
    await daemon.stop();
  }
}

/** Waits until the space whose memory folder is `memoryDir` has a run record (10 s at most). */
export function aRunRecord(memoryDir: string): Promise<void> {
  return eventually(async () => (await listRuns(memoryDir)).length > 0, 10_000, 'a run record');
}
