/**
 * Figure 6: queue throughput. 1,000 consolidation jobs (one space each, one short session, forced past the
 * gates) through the daemon's BullMQ queue on one real redis-server, worked by 1, 2 and 4 worker processes
 * (each the daemon's worker pool with the default concurrency and the real consolidator), the model a fake
 * server with no latency. Timed from the first job queued to the last job completed; workers start first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { QueueEvents } from 'bullmq';
import { CONSOLIDATION_JOB, CONSOLIDATION_QUEUE } from '../../src/core/jobs.js';
import {
  connectionOptions,
  consolidationJobOptions,
  createConsolidationQueue,
} from '../../src/daemon/queue.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { startRedis, uniquePrefix } from '../../harness/redis.js';
import type { Figure } from '../report.js';
import { makeTempRoot } from '../setup.js';
import { DEFAULT_WORKLOAD, generateSession } from '../workload.js';

export interface QueueThroughputOptions {
  readonly runs: number;
  readonly workers: readonly number[];
  readonly log: (line: string) => void;
}

const TARGET_RUNS_PER_SECOND = 200;
/** A worker process that is not ready by then is a benchmark failure. */
const READY_TIMEOUT_MS = 60_000;

async function writeSpaces(
  root: string,
  runs: number,
  modelUrl: string,
  redisUrl: string,
  prefix: string,
): Promise<string> {
  const spaces = [];
  for (let index = 0; index < runs; index += 1) {
    const id = `q${String(index).padStart(4, '0')}`;
    const sessions = join(root, id, 'sessions');
    await mkdir(sessions, { recursive: true });
    const session = generateSession(
      {
        ...DEFAULT_WORKLOAD,
        messagesPerSession: 6,
        toolResultChars: 300,
        factsPerSession: 1,
        secretsPerSession: 0,
      },
      index,
      0,
    );
    await writeFile(join(sessions, `${session.id}.json`), session.json);
    spaces.push({ id, sessions, memory: join(root, id, 'memory') });
  }
  const configPath = join(root, 'dreamd.config.json');
  await writeFile(
    configPath,
    JSON.stringify(
      { redisUrl, redisPrefix: prefix, model: { baseUrl: modelUrl, maxRetries: 0 }, spaces },
      null,
      2,
    ),
  );
  return configPath;
}

async function startWorker(configPath: string, redisUrl: string): Promise<ChildProcess> {
  const script = join(import.meta.dirname, '..', 'queue-worker-child.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, configPath, redisUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS);
  try {
    for await (const line of lines) if (line === 'ready') return child;
    throw new Error(`worker process ${child.pid} exited before it was ready`);
  } finally {
    clearTimeout(timer);
  }
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function measureRound(
  processes: number,
  runs: number,
  paths: { root: string; modelUrl: string; redisUrl: string },
): Promise<{ seconds: number; completed: number; failed: number }> {
  const prefix = uniquePrefix(`bench-${processes}`);
  const configPath = await writeSpaces(
    join(paths.root, `workers-${processes}`),
    runs,
    paths.modelUrl,
    paths.redisUrl,
    prefix,
  );
  const connection = connectionOptions(paths.redisUrl);
  const queue = createConsolidationQueue({ connection, prefix });
  const events = new QueueEvents(CONSOLIDATION_QUEUE, { connection, prefix });
  const workers: ChildProcess[] = [];
  try {
    await events.waitUntilReady();
    for (let index = 0; index < processes; index += 1)
      workers.push(await startWorker(configPath, paths.redisUrl));
    let completed = 0;
    let failed = 0;
    const finished = new Promise<void>((resolve) => {
      const count = (ok: boolean): void => {
        if (ok) completed += 1;
        else failed += 1;
        if (completed + failed === runs) resolve();
      };
      events.on('completed', ({ returnvalue }) => {
        const status = (
          typeof returnvalue === 'string'
            ? (JSON.parse(returnvalue) as { status?: string })
            : (returnvalue as { status?: string })
        ).status;
        count(status === 'completed');
      });
      events.on('failed', () => count(false));
    });
    const workersConfig = { concurrency: 2, attempts: 1, backoffMs: 0 };
    const started = performance.now();
    await queue.addBulk(
      Array.from({ length: runs }, (_, index) => {
        const spaceId = `q${String(index).padStart(4, '0')}`;
        return {
          name: CONSOLIDATION_JOB,
          data: {
            spaceId,
            force: true,
            dryRun: false,
            trigger: 'api' as const,
            requestedAt: new Date().toISOString(),
          },
          opts: consolidationJobOptions(spaceId, workersConfig),
        };
      }),
    );
    await finished;
    return { seconds: (performance.now() - started) / 1000, completed, failed };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await events.close();
    await queue.close();
  }
}

export async function measureQueueThroughput(options: QueueThroughputOptions): Promise<Figure[]> {
  const root = await makeTempRoot('queue');
  const server = await startFakeAnthropicServer({ latencyMs: 0 });
  server.setDefault({ json: { facts: [] } });
  const redis = await startRedis();
  try {
    const figures: Figure[] = [];
    for (const processes of options.workers) {
      options.log(`  ${options.runs} runs on ${processes} worker process${processes === 1 ? '' : 'es'}`);
      const round = await measureRound(processes, options.runs, {
        root: root.path,
        modelUrl: server.url,
        redisUrl: redis.url,
      });
      const rate = round.completed / round.seconds;
      const isTarget = processes === 4;
      figures.push({
        key: `queue-throughput-${processes}`,
        name: `Queue throughput, ${options.runs} runs, ${processes} worker process${processes === 1 ? '' : 'es'}`,
        value: rate,
        unit: 'runs/s',
        target: isTarget ? '≥ 200 runs/s' : '(4 processes: ≥ 200 runs/s)',
        ratio: rate / TARGET_RUNS_PER_SECOND,
        ratioOf: '× target',
        met: isTarget ? rate >= TARGET_RUNS_PER_SECOND && round.failed === 0 : undefined,
        details: {
          'seconds for all runs': round.seconds,
          'runs completed': round.completed,
          'runs failed or skipped': round.failed,
          'jobs at a time in each process (workers.concurrency, default)': 2,
        },
      });
    }
    return figures;
  } finally {
    await redis.stop();
    await server.close();
    await root.remove();
  }
}
