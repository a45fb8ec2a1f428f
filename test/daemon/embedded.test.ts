/**
 * The daemon without Redis: `dreamd start` on nothing but Node runs the embedded queue. Same HTTP API, one run
 * per space at a time, retries with backoff, a busy space waited out, a graceful stop.
 */
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfig, type Config } from '../../src/config/schema.js';
import { createDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { createEmbeddedQueue, type CreateEmbeddedQueueOptions } from '../../src/daemon/embedded-queue.js';
import type { RunTrigger } from '../../src/core/run.js';
import { ConfigError, LockBusyError, ModelError } from '../../src/errors.js';
import {
  createFakeConsolidate,
  createFakeInspection,
  deferred,
  eventually,
  makeConfig,
  makeSpace,
  makeSummary,
  silentLogger,
  type FakeConsolidate,
} from './fakes.js';
import { eventuallyValue } from '../support/eventually.js';

function embeddedConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...makeConfig({ redisUrl: 'unused', redisPrefix: 'x', stateDir: overrides.stateDir }),
    redisUrl: undefined,
    ...overrides,
  };
}

const daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop()));
});

/** A job as the API shows it, once it is finished. */
function finishedJob(address: string, jobId: string): Promise<Record<string, unknown>> {
  return eventuallyValue(
    async () => {
      const job = (await (await fetch(`${address}/jobs/${jobId}`)).json()) as Record<string, unknown>;
      return job.state === 'completed' || job.state === 'failed' ? job : undefined;
    },
    10_000,
    `job ${jobId} to finish`,
  );
}

describe('the daemon with no Redis (embedded queue)', () => {
  it('serves /healthz, queues a manual run over HTTP, refuses a second one for the same space, and reports the job', async () => {
    const gate = deferred();
    const fake = createFakeConsolidate();
    const inspection = createFakeInspection({ alpha: { settledNew: 6 } });
    fake.script.push(async (call) => {
      call.options?.onProgress?.({ phase: 'extract', done: 1, total: 3 });
      await gate.promise;
      inspection.set('alpha', { settledNew: 0 }); // the run consumed them
      return makeSummary(call.space, call.request);
    });
    const daemon = createDaemon({
      config: embeddedConfig(),
      consolidate: fake.consolidate,
      inspectSpace: inspection.inspectSpace,
      logger: silentLogger,
      env: {},
      tickOnStart: false,
    });
    daemons.push(daemon);
    await daemon.start();
    expect(daemon.queueKind).toBe('embedded');
    expect(daemon.redisUrl).toBeUndefined();
    const address = daemon.address!;

    const health = await fetch(`${address}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      ok: true,
      queue: 'embedded',
      redis: 'absent',
      workers: 'running',
    });

    const queued = await fetch(`${address}/spaces/alpha/consolidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ force: true }),
    });
    expect(queued.status).toBe(202);
    const { jobId } = (await queued.json()) as { jobId: string };
    await fake.waitForCalls(1);
    expect(fake.calls[0]!.request).toMatchObject({ force: true, trigger: 'api', jobId });

    const again = await fetch(`${address}/spaces/alpha/consolidate`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ jobId, state: 'active' });
    const running = (await (await fetch(`${address}/jobs/${jobId}`)).json()) as Record<string, unknown>;
    expect(running).toMatchObject({ state: 'active', progress: { phase: 'extract', done: 1, total: 3 } });
    expect(await (await fetch(`${address}/spaces/alpha`)).json()).toMatchObject({
      currentJob: { id: jobId, state: 'active' },
    });

    gate.resolve();
    const job = await finishedJob(address, jobId);
    expect(job).toMatchObject({
      state: 'completed',
      attemptsMade: 1,
      summary: { spaceId: 'alpha', added: 3 },
    });
    const queue = (await (await fetch(`${address}/queue`)).json()) as Record<string, unknown>;
    expect(queue).toMatchObject({ queue: 'embedded', counts: { completed: 1, active: 0, waiting: 0 } });
    const dashboard = await fetch(`${address}/queues`);
    expect(dashboard.status).toBe(404);
    expect(((await dashboard.json()) as { error: string }).error).toMatch(/embedded queue.*REDIS_URL/);
    const metrics = await (await fetch(`${address}/metrics`)).text();
    expect(metrics).toContain('dreamd_jobs{state="completed"} 1');
    // The run's space is counted again after the run, not at the next tick (an hour away).
    await eventually(async () =>
      (await (await fetch(`${address}/metrics`)).text()).includes('dreamd_pending_sessions{space="alpha"} 0'),
    );
  });

  it('stops at once on a busy port, naming DREAMD_PORT, before any run', async () => {
    const busy = createNetServer();
    await new Promise<void>((resolve) => busy.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = busy.address() as AddressInfo;
    const fake = createFakeConsolidate();
    const daemon = createDaemon({
      config: embeddedConfig({ server: ServerConfig.parse({ host: '127.0.0.1', port }) }),
      consolidate: fake.consolidate,
      inspectSpace: createFakeInspection({ alpha: { settledNew: 9 } }).inspectSpace,
      logger: silentLogger,
      env: {},
    });
    daemons.push(daemon);
    try {
      const error = await daemon.start().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(
        new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*DREAMD_PORT`),
      );
      expect(daemon.state).toBe('stopped');
      expect(fake.calls).toHaveLength(0);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('queues the spaces whose gates are open at a tick', async () => {
    const fake = createFakeConsolidate();
    const daemon = createDaemon({
      config: embeddedConfig({ spaces: [makeSpace('five'), makeSpace('four')] }),
      consolidate: fake.consolidate,
      inspectSpace: createFakeInspection({ five: { settledNew: 5 }, four: { settledNew: 4 } }).inspectSpace,
      logger: silentLogger,
      env: {},
      roles: { server: false },
      tickOnStart: false,
    });
    daemons.push(daemon);
    await daemon.start();
    const report = await daemon.tick();
    expect(report.spaces.map((space) => [space.spaceId, space.outcome])).toEqual([
      ['five', 'enqueued'],
      ['four', 'gates-closed'],
    ]);
    await fake.waitForCalls(1);
    expect(fake.calls.map((call) => call.space.id)).toEqual(['five']);
  });

  it('refuses `worker` or `scheduler` alone without Redis, naming REDIS_URL', async () => {
    for (const roles of [
      { scheduler: false, server: false },
      { workers: false, server: false },
    ]) {
      const daemon = createDaemon({
        config: embeddedConfig(),
        consolidate: createFakeConsolidate().consolidate,
        inspectSpace: createFakeInspection().inspectSpace,
        logger: silentLogger,
        env: {},
        roles,
      });
      const start = daemon.start();
      await expect(start).rejects.toBeInstanceOf(ConfigError);
      await expect(start).rejects.toThrow(/REDIS_URL/);
      expect(daemon.state).toBe('stopped');
    }
  });
});

describe('createEmbeddedQueue', () => {
  // Made once for the describe, outside any test: the queue never reads the state folder, so none is made.
  const config = embeddedConfig({
    stateDir: '/nonexistent/state',
    workers: { concurrency: 2, attempts: 3, backoffMs: 5 },
    spaces: [makeSpace('alpha'), makeSpace('beta')],
  });
  const space = config.spaces[0]!;

  function finished(queue: ReturnType<typeof createEmbeddedQueue>, jobId: string) {
    return eventuallyValue(
      async () => {
        const job = await queue.getJob(jobId);
        return job?.state === 'completed' || job?.state === 'failed' ? job : undefined;
      },
      10_000,
      `job ${jobId} to finish`,
    );
  }

  /**
   * An embedded queue of `fake`'s runs on the config `getConfig` gives (this block's by default), `options` over
   * the defaults; `enqueue` queues a run of a space as `trigger` (manual by default) would, now.
   */
  function openEmbedded(
    fake: FakeConsolidate,
    options: Partial<CreateEmbeddedQueueOptions> = {},
    getConfig: () => Config = () => config,
  ) {
    const queue = createEmbeddedQueue({
      getConfig,
      consolidate: fake.consolidate,
      logger: silentLogger,
      ...options,
    });
    const enqueue = (spaceId: string, trigger: RunTrigger = 'manual') =>
      queue.enqueue(
        spaceId,
        { force: false, dryRun: false, trigger },
        { workers: getConfig().workers, now: new Date() },
      );
    return { queue, enqueue };
  }

  it('retries a failing run with backoff until it succeeds, counting attempts', async () => {
    const fake = createFakeConsolidate();
    const failure = new ModelError('overloaded', { retryable: true, kind: 'overloaded' });
    fake.script.push(
      () => Promise.reject(failure),
      () => Promise.reject(failure),
    );
    const failures: string[] = [];
    const { queue, enqueue } = openEmbedded(fake, {
      onFailed: (_error, spaceId) => failures.push(spaceId),
      random: () => 0.5,
    });
    const { jobId } = await enqueue(space.id);
    const job = await finished(queue, jobId);
    expect(job).toMatchObject({ state: 'completed', attemptsMade: 3 });
    expect(failures).toEqual(['alpha', 'alpha']);
    await queue.close();
  });

  it('fails at once on a ConfigError or a model error that cannot be retried, and after the last attempt otherwise', async () => {
    const fake = createFakeConsolidate();
    fake.script.push(
      () => Promise.reject(new ConfigError('bad path', 'spaces')),
      () => Promise.reject(new Error('disk on fire')),
      () => Promise.reject(new Error('disk on fire')),
      () => Promise.reject(new Error('disk on fire')),
    );
    const { queue, enqueue } = openEmbedded(fake);
    const first = await enqueue('alpha');
    expect(await finished(queue, first.jobId)).toMatchObject({
      state: 'failed',
      attemptsMade: 1,
      failedReason: 'bad path',
    });
    const second = await enqueue('alpha');
    expect(second.status).toBe('queued');
    expect(await finished(queue, second.jobId)).toMatchObject({ state: 'failed', attemptsMade: 3 });
    expect((await queue.failed(10)).map((job) => job.id)).toEqual([second.jobId, first.jobId]);
    await queue.close();
  });

  it('waits out a busy space without spending an attempt', async () => {
    const fake = createFakeConsolidate();
    fake.script.push(() => Promise.reject(new LockBusyError('space "alpha" is locked', 'alpha')));
    const { queue, enqueue } = openEmbedded(fake, { timing: { busyDelayMs: 5 } });
    const { jobId } = await enqueue('alpha');
    expect(await finished(queue, jobId)).toMatchObject({ state: 'completed', attemptsMade: 1 });
    expect(fake.calls).toHaveLength(2);
    await queue.close();
  });

  it('runs at most workers.concurrency runs at once, and a reload changes it', async () => {
    const gates = [deferred(), deferred(), deferred()];
    let active = 0;
    let most = 0;
    const fake = createFakeConsolidate();
    for (const gate of gates) {
      fake.script.push(async (call) => {
        active += 1;
        most = Math.max(most, active);
        await gate.promise;
        active -= 1;
        return makeSummary(call.space, call.request);
      });
    }
    const spaces = ['a', 'b', 'c'].map(makeSpace);
    let live = embeddedConfig({ spaces, workers: { concurrency: 1, attempts: 1, backoffMs: 5 } });
    const { queue, enqueue } = openEmbedded(fake, {}, () => live);
    const ids = [];
    for (const { id } of spaces) ids.push((await enqueue(id, 'schedule')).jobId);
    await fake.waitForCalls(1);
    expect((await queue.counts()).waiting).toBe(2);
    live = { ...live, workers: { ...live.workers, concurrency: 2 } };
    queue.reload(live);
    gates[0]!.resolve();
    await fake.waitForCalls(3);
    expect(most).toBe(2);
    gates[1]!.resolve();
    gates[2]!.resolve();
    for (const id of ids) expect((await finished(queue, id)).state).toBe('completed');
    await queue.close();
  });

  it('stops gracefully: the running run finishes, queued ones are dropped, new ones are refused', async () => {
    const gate = deferred();
    const fake = createFakeConsolidate();
    fake.script.push(async (call) => {
      await gate.promise;
      return makeSummary(call.space, call.request);
    });
    const single = { ...config, workers: { ...config.workers, concurrency: 1 } };
    const { queue, enqueue } = openEmbedded(fake, {}, () => single);
    const running = await enqueue('alpha', 'schedule');
    const waiting = await enqueue('beta', 'schedule');
    await fake.waitForCalls(1);
    const closing = queue.close();
    gate.resolve();
    await closing;
    expect(queue.isRunning()).toBe(false);
    expect(await queue.getJob(running.jobId)).toMatchObject({ state: 'completed' });
    expect(await queue.getJob(waiting.jobId)).toMatchObject({ state: 'failed' });
    expect(fake.calls).toHaveLength(1);
    await expect(enqueue('alpha', 'schedule')).rejects.toThrow(/stopping/);
  });
});
