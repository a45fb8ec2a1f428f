import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createFakeConsolidate, deferred, eventually, makeSpace, makeSummary } from './fakes.js';
import {
  enqueueRun,
  failOnLeftovers,
  jobReaches,
  openQueue,
  openRedisConfig,
  openWorkerPool,
  track,
} from './harness.js';

failOnLeftovers();

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'worker-child.ts');

/** A fault test's end: each of `open` closed in its order (pool, queue, probe), then Redis stopped. */
async function closeAll(
  redis: { stop(): Promise<void> },
  ...open: { close(): Promise<unknown> }[]
): Promise<void> {
  for (const each of open) await each.close();
  await redis.stop();
}

describe('faults', () => {
  it('resumes after Redis is killed and restarted: a job queued after the restart completes', async () => {
    const { redis, config } = await openRedisConfig('restart');
    const fake = createFakeConsolidate();
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });
    const before = openQueue(config);
    const first = await enqueueRun(before, config, 'alpha');
    await jobReaches(before, first.jobId, 'completed', 10_000, 'the first job');
    await before.close();

    await redis.kill();
    await eventually(() => pool.state === 'redis-down', 60_000, 'the pool to notice');
    await redis.restart();
    await eventually(() => pool.state === 'running' && pool.isRunning(), 10_000, 'the pool to resume');

    const after = openQueue(config);
    // The completed job survived the crash (appendonly), so the dedup key was released and a new job is queued.
    expect(await after.getJobState(first.jobId)).toBe('completed');
    const second = await enqueueRun(after, config, 'alpha');
    expect(second.status).toBe('queued');
    await jobReaches(after, second.jobId, 'completed', 15_000, 'the job queued after the restart');
    expect(fake.calls).toHaveLength(2);

    await closeAll(redis, pool, after, probe);
  });

  it('loses no job across a Redis crash: one waiting and one running both complete', async () => {
    const { redis, config } = await openRedisConfig('crash', {
      spaces: [makeSpace('alpha'), makeSpace('beta')],
      workers: { concurrency: 1 },
    });
    const fake = createFakeConsolidate();
    const release = deferred();
    fake.script.push(async (call) => {
      await release.promise;
      return makeSummary(call.space, call.request);
    });
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });
    const queue = openQueue(config);
    const running = await enqueueRun(queue, config, 'alpha');
    await fake.waitForCalls(1);
    const waiting = await enqueueRun(queue, config, 'beta');
    await queue.close();

    await redis.kill();
    await eventually(() => pool.state === 'redis-down', 60_000, 'the pool to notice');
    await redis.restart();
    await eventually(() => pool.state === 'running', 10_000, 'the pool to resume');
    release.resolve();

    const after = openQueue(config);
    await jobReaches(after, running.jobId, 'completed', 30_000, 'the running job');
    await jobReaches(after, waiting.jobId, 'completed', 30_000, 'the waiting job');
    expect(fake.calls.map((call) => call.space.id)).toEqual(['alpha', 'beta']);

    await closeAll(redis, pool, after, probe);
  });

  it('replaces a worker that closed on its own at the next health check', async () => {
    const { redis, config } = await openRedisConfig('replace');
    const fake = createFakeConsolidate();
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });
    const original = pool.worker;
    await original.close();
    expect(pool.isRunning()).toBe(false);

    await eventually(() => pool.worker !== original && pool.isRunning(), 60_000, 'a new worker');
    const queue = openQueue(config);
    const queued = await enqueueRun(queue, config, 'alpha');
    await jobReaches(queue, queued.jobId, 'completed', 10_000, 'the job');

    await closeAll(redis, pool, queue, probe);
  });

  it('hands its job to another worker once the lock expires, and the run completes once', async () => {
    const { redis, config } = await openRedisConfig('kill9');
    const queue = openQueue(config);
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, redis.url, config.redisPrefix, '2000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    track(
      'worker child process',
      child,
      (value) => value.exitCode === null && value.signalCode === null,
      async (value) => {
        value.kill('SIGKILL');
        await once(value, 'exit');
      },
    );
    const lines = createInterface({ input: child.stdout });
    const started = new Promise<string>((resolve) =>
      lines.on('line', (line) => line.startsWith('started ') && resolve(line.slice(8))),
    );

    const queued = await enqueueRun(queue, config, 'alpha', { trigger: 'schedule' });
    expect(await started).toBe(queued.jobId);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await queue.getJobState(queued.jobId)).toBe('active');

    const fake = createFakeConsolidate();
    const { pool, probe } = openWorkerPool({
      config,
      consolidate: fake.consolidate,
      timing: { stalledIntervalMs: 500 },
    });
    await jobReaches(queue, queued.jobId, 'completed', 15_000, 'the job to be recovered');

    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.request.jobId).toBe(queued.jobId);
    expect(await queue.getCompletedCount()).toBe(1);

    await closeAll(redis, pool, queue, probe);
  });
});
