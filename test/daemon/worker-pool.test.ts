import { describe, expect, it } from 'vitest';
import { QueueEvents } from 'bullmq';
import { LockBusyError, ConfigError } from '../../src/errors.js';
import { connectionOptions } from '../../src/daemon/queue.js';
import { deferred, eventually, makeSpace, makeSummary } from './fakes.js';
import { failOnLeftovers, openQueueBench, openWorkerPool, track } from './harness.js';

failOnLeftovers();

describe('worker pool', () => {
  it('runs a queued job and reports its progress on the job', async () => {
    const { redis, config, queue, fake, enqueue, close } = await openQueueBench('progress');
    const events = track(
      'queue events',
      new QueueEvents('consolidation', {
        connection: connectionOptions(redis.url),
        prefix: config.redisPrefix,
      }),
      (value) => value.closing === undefined,
      (value) => value.close(),
    );
    await events.waitUntilReady();
    const progress: unknown[] = [];
    events.on('progress', ({ data }) => progress.push(data));
    // Progress from the start (the default waits 250 ms, longer than this fake run).
    const { pool, probe } = openWorkerPool({
      config,
      consolidate: fake.consolidate,
      timing: { progressDelayMs: 0 },
    });

    const queued = await enqueue('alpha', { trigger: 'manual' });
    expect(queued.status).toBe('queued');
    const job = (await queue.getJob(queued.jobId))!;
    const summary = await job.waitUntilFinished(events, 10_000);

    expect(summary).toMatchObject({ spaceId: 'alpha', status: 'completed', added: 3 });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.request).toEqual({
      force: false,
      dryRun: false,
      trigger: 'manual',
      jobId: queued.jobId,
    });
    expect((await queue.getJob(queued.jobId))!.progress).toEqual({
      phase: 'write',
      done: 2,
      total: 2,
      message: 'done',
    });
    await eventually(() => progress.length === 2, 60_000, 'two progress events');
    expect(progress[0]).toEqual({ phase: 'gather', done: 1, total: 2 });

    await close(pool, events, probe);
  });

  it('retries a job whose space is busy later instead of failing it, without spending an attempt', async () => {
    const { config, queue, fake, enqueue, reaches, close } = await openQueueBench('busy', {
      workers: { attempts: 1 },
    });
    fake.script.push(async (call) => {
      throw new LockBusyError(`space ${call.space.id} is locked`, call.space.id, {
        owner: 'cli',
        pid: 1,
        host: 'h',
        startedAt: 'x',
      });
    });
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });

    const queued = await enqueue('alpha', { force: true });
    await reaches(queued.jobId, 'completed');

    expect(fake.calls).toHaveLength(2);
    const job = (await queue.getJob(queued.jobId))!;
    expect(job.attemptsMade).toBe(1);
    expect(await queue.getFailedCount()).toBe(0);

    await close(pool, probe);
  });

  it('fails a job at once when the space has a config error', async () => {
    const { config, queue, fake, enqueue, reaches, close } = await openQueueBench('config', {
      workers: { attempts: 5 },
    });
    fake.script.push(async () => {
      throw new ConfigError('model.apiKey is missing; set ANTHROPIC_API_KEY', 'model.apiKey');
    });
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });

    const queued = await enqueue();
    await reaches(queued.jobId, 'failed');

    expect(fake.calls).toHaveLength(1);
    expect((await queue.getJob(queued.jobId))!.failedReason).toContain('ANTHROPIC_API_KEY');

    await close(pool, probe);
  });

  it('retries a failing run with backoff until it succeeds', async () => {
    const { config, queue, fake, enqueue, reaches, close } = await openQueueBench('retry', {
      workers: { attempts: 3, backoffMs: 20 },
    });
    fake.script.push(async () => {
      throw new Error('model overloaded');
    });
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });

    const queued = await enqueue();
    await reaches(queued.jobId, 'completed');
    expect(fake.calls).toHaveLength(2);
    expect((await queue.getJob(queued.jobId))!.attemptsMade).toBe(2);

    await close(pool, probe);
  });

  it('lets the running job finish on close, and takes no new one', async () => {
    const { config, queue, fake, enqueue, close } = await openQueueBench('graceful', {
      spaces: [makeSpace('alpha'), makeSpace('beta')],
    });
    const release = deferred();
    fake.script.push(async (call) => {
      await release.promise;
      return makeSummary(call.space, call.request);
    });
    const { pool, probe } = openWorkerPool({
      config,
      consolidate: fake.consolidate,
      timing: { shutdownTimeoutMs: 10_000 },
    });
    const first = await enqueue('alpha');
    await fake.waitForCalls(1);

    const closed = pool.close();
    expect(pool.state).toBe('closing');
    const second = await enqueue('beta');
    release.resolve();
    await closed;

    expect(pool.state).toBe('closed');
    expect(await queue.getJobState(first.jobId)).toBe('completed');
    expect(await queue.getJobState(second.jobId)).toBe('waiting');
    expect(fake.calls).toHaveLength(1);

    await close(probe);
  });

  it('aborts a run that outlasts the shutdown timeout and hands its job back to the queue', async () => {
    const { config, queue, fake, enqueue, reaches, close } = await openQueueBench('handback');
    fake.script.push(
      (call) =>
        new Promise((_resolve, reject) => {
          call.options?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    );
    const { pool, probe } = openWorkerPool({
      config,
      consolidate: fake.consolidate,
      timing: { shutdownTimeoutMs: 300 },
    });
    const queued = await enqueue();
    await fake.waitForCalls(1);

    await pool.close();

    expect(await queue.getJobState(queued.jobId)).toBe('waiting');
    const job = (await queue.getJob(queued.jobId))!;
    expect(job.attemptsMade).toBe(0);

    // Another worker picks it up and finishes it.
    const next = openWorkerPool({ config, consolidate: fake.consolidate });
    await reaches(queued.jobId, 'completed');

    await close(next.pool, next.probe, probe);
  });
});
