/**
 * Child process of figure 6: one dreamd worker process (the daemon's worker pool with the real consolidator,
 * its model pointed at the fake server). Usage: `tsx bench/queue-worker-child.ts <config.json> <redisUrl>`.
 * Prints "ready" when its worker is running; exits on SIGTERM after closing the pool.
 */
import pino from 'pino';
import { loadConfig } from '../src/config/load.js';
import { createConsolidator } from '../src/consolidation/run.js';
import { connectionOptions } from '../src/daemon/queue.js';
import { createRedisProbe } from '../src/daemon/redis-probe.js';
import { createWorkerPool } from '../src/daemon/worker-pool.js';
import { createModel } from '../src/model/index.js';

const [configPath, redisUrl] = process.argv.slice(2);
if (configPath === undefined || redisUrl === undefined) {
  console.error('usage: queue-worker-child.ts <config.json> <redisUrl>');
  process.exit(2);
}
const config = loadConfig({ path: configPath, env: { ANTHROPIC_API_KEY: 'sk-ant-bench-key' } });
const pool = createWorkerPool({
  config,
  connection: connectionOptions(redisUrl),
  probe: createRedisProbe(redisUrl),
  logger: pino({ level: 'silent' }),
  consolidate: createConsolidator({ config, model: createModel(config.model) }),
});
process.once('SIGTERM', () => {
  void pool.close().then(() => process.exit(0));
});
const waitUntilRunning = (): void => {
  if (pool.isRunning()) process.stdout.write('ready\n');
  else setTimeout(waitUntilRunning, 20);
};
waitUntilRunning();
