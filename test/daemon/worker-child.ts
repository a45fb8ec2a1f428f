// Child process for the kill -9 test: a worker pool whose runs never end. Prints "started <jobId>" when it takes a
// job, then holds it until the parent kills the process.
import pino from 'pino';
import { connectionOptions } from '../../src/daemon/queue.js';
import { createRedisProbe } from '../../src/daemon/redis-probe.js';
import { createWorkerPool } from '../../src/daemon/worker-pool.js';
import { makeConfig, makeSpace } from './fakes.js';

const [url = '', prefix = '', lockDurationMs = '2000'] = process.argv.slice(2);
// The worker pool never reads the state folder, and this process has no test to remove one after.
const config = makeConfig({
  redisUrl: url,
  redisPrefix: prefix,
  spaces: [makeSpace('alpha')],
  stateDir: '/nonexistent/state',
});
createWorkerPool({
  config,
  connection: connectionOptions(url),
  probe: createRedisProbe(url),
  logger: pino({ level: 'silent' }),
  timing: { lockDurationMs: Number(lockDurationMs), stalledIntervalMs: 500 },
  consolidate: (_space, request) => {
    process.stdout.write(`started ${request.jobId}\n`);
    return new Promise(() => undefined);
  },
});
process.stdout.write('ready\n');
