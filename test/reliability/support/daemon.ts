/**
 * The daemon as `dreamd start` wires it (createDaemon: Redis, queue, worker pool, scheduler, HTTP server) with
 * the real consolidator and inspection over a reliability workspace, and the waits the daemon cases share.
 */
import { eventually } from '../../support/eventually.js';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createInspectSpace } from '../../../src/consolidation/inspect.js';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import type { WorkerTiming } from '../../../src/daemon/worker-pool.js';
import { uniquePrefix } from '../../../harness/redis.js';
import { NOW, consolidatorFor, createWorkspace, type Workspace } from './harness.js';

/** The daemon over `workspace`; `timing` over the short BullMQ timings below. */
export function startWorkspaceDaemon(workspace: Workspace, timing: Partial<WorkerTiming> = {}): Daemon {
  const now = (): Date => NOW;
  return createDaemon({
    config: workspace.config,
    consolidate: consolidatorFor(workspace.config, { now }),
    inspectSpace: createInspectSpace({ config: workspace.config, now }),
    logger: pino({ level: process.env.DREAMD_TEST_LOG ?? 'silent' }),
    // An empty environment: a REDIS_URL of the machine running the tests must not win over the test's Redis.
    env: {},
    now,
    tickOnStart: false,
    // Short BullMQ lock and stalled check, so a job whose worker lost Redis is found again within seconds.
    workerTiming: {
      healthCheckIntervalMs: 200,
      stalledIntervalMs: 1_000,
      lockDurationMs: 5_000,
      busyDelayMs: 200,
      shutdownTimeoutMs: 5_000,
      abortGraceMs: 1_000,
      ...timing,
    },
  });
}

/** Waits until `condition` holds (see test/support/eventually.ts); throws with `what` after `timeoutMs`. */
export function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  return eventually(condition, timeoutMs, what, 50);
}

/** Job counts of dreamd's queue straight from Redis (BullMQ's key layout), and the stalled set. */
export async function queueCounts(
  url: string,
  prefix: string,
): Promise<{
  wait: number;
  active: number;
  delayed: number;
  completed: number;
  failed: number;
  stalled: number;
  prioritized: number;
}> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const key = (name: string): string => `${prefix}:consolidation:${name}`;
  try {
    const [wait, active, delayed, completed, failed, stalled, prioritized] = await Promise.all([
      client.llen(key('wait')),
      client.llen(key('active')),
      client.zcard(key('delayed')),
      client.zcard(key('completed')),
      client.zcard(key('failed')),
      client.scard(key('stalled')),
      client.zcard(key('prioritized')),
    ]);
    return { wait, active, delayed, completed, failed, stalled, prioritized };
  } finally {
    client.disconnect();
  }
}

/**
 * A workspace of one space per id (no sessions yet) whose daemon queues on the test's Redis under a prefix of
 * its own (`name` and a unique suffix) and runs `concurrency` jobs at a time.
 */
export function queuedWorkspace(options: {
  readonly name: string;
  readonly ids: readonly string[];
  readonly modelUrl: string;
  readonly redisUrl: string;
  readonly concurrency: number;
}): { workspace: Workspace; prefix: string } {
  const prefix = uniquePrefix(options.name);
  const workspace = createWorkspace({
    modelUrl: options.modelUrl,
    spaces: options.ids.map((id) => ({ id })),
    redisUrl: options.redisUrl,
    redisPrefix: prefix,
    concurrency: options.concurrency,
  });
  return { workspace, prefix };
}
