import { describe, expect, it } from 'vitest';
import { bullmqJobs } from '../../src/daemon/jobs.js';
import type { Config } from '../../src/config/schema.js';
import type { ConsolidationQueue } from '../../src/daemon/queue.js';
import { createScheduler, type Scheduler } from '../../src/daemon/scheduler.js';
import { createFakeInspection, eventually, makeSpace, silentLogger } from './fakes.js';
import { failOnLeftovers, openQueue, openQueueBench, openWorkerPool } from './harness.js';

failOnLeftovers();

const fixedNow = () => new Date('2025-06-02T12:00:00Z');
const dayAgo = '2025-06-01T11:00:00Z';

/** A scheduler of `config` on `queue`, inspecting spaces with the fake inspection, at the fixed clock. */
function schedulerOn(
  config: Config,
  queue: ConsolidationQueue,
  inspection: ReturnType<typeof createFakeInspection>,
): Scheduler {
  return createScheduler({
    config,
    jobs: bullmqJobs(queue),
    inspectSpace: inspection.inspectSpace,
    now: fixedNow,
    logger: silentLogger,
  });
}

describe('scheduler', () => {
  it('enqueues a space with five settled sessions and one run happens; a space with four is skipped', async () => {
    const { config, queue, fake, close } = await openQueueBench('gates', {
      spaces: [makeSpace('five'), makeSpace('four')],
    });
    const inspection = createFakeInspection({
      five: { settledNew: 5, lastSuccessfulRunAt: dayAgo },
      four: { settledNew: 4, lastSuccessfulRunAt: dayAgo },
    });
    const { pool, probe } = openWorkerPool({ config, consolidate: fake.consolidate });
    const scheduler = schedulerOn(config, queue, inspection);

    const report = await scheduler.tick();

    expect(report.spaces).toEqual([
      { spaceId: 'five', outcome: 'enqueued', jobId: expect.any(String) },
      { spaceId: 'four', outcome: 'gates-closed', reasons: ['4 settled new sessions; 5 needed'] },
    ]);
    await eventually(async () => (await queue.getCompletedCount()) === 1, 10_000, 'one completed run');
    expect(fake.calls.map((call) => [call.space.id, call.request.trigger])).toEqual([['five', 'schedule']]);
    expect(await queue.getJobCounts('waiting', 'delayed', 'active', 'failed')).toEqual({
      waiting: 0,
      delayed: 0,
      active: 0,
      failed: 0,
    });

    await close(pool, probe);
  });

  it('lets two schedulers on one Redis enqueue each space once', async () => {
    const {
      config,
      queue: queueA,
      close,
    } = await openQueueBench('replicas', {
      spaces: [makeSpace('alpha'), makeSpace('beta'), makeSpace('gamma')],
    });
    const inspection = createFakeInspection({
      alpha: { settledNew: 9 },
      beta: { settledNew: 5 },
      gamma: { settledNew: 1 },
    });
    const queueB = openQueue(config);
    const schedulerA = schedulerOn(config, queueA, inspection);
    const schedulerB = schedulerOn(config, queueB, inspection);

    const [reportA, reportB] = await Promise.all([schedulerA.tick(), schedulerB.tick()]);
    const again = await schedulerA.tick();

    const outcomes = (spaceId: string) =>
      [reportA, reportB, again]
        .map((report) => report.spaces.find((space) => space.spaceId === spaceId)!.outcome)
        .sort();
    expect(outcomes('alpha')).toEqual(['already-queued', 'already-queued', 'enqueued']);
    expect(outcomes('beta')).toEqual(['already-queued', 'already-queued', 'enqueued']);
    expect(outcomes('gamma')).toEqual(['gates-closed', 'gates-closed', 'gates-closed']);
    const waiting = await queueA.getJobs(['waiting']);
    expect(waiting.map((job) => job.data.spaceId).sort()).toEqual(['alpha', 'beta']);

    await close(queueB);
  });

  it('reports a space whose inspection fails and carries on with the others', async () => {
    const { config, queue, close } = await openQueueBench('broken', {
      spaces: [makeSpace('gone'), makeSpace('fine')],
    });
    const inspection = createFakeInspection({ fine: { settledNew: 6 } });
    inspection.failFor('gone', new Error('ENOENT: sessions directory /x/gone/sessions vanished'));
    const scheduler = schedulerOn(config, queue, inspection);

    const report = await scheduler.tick();

    expect(report.spaces[0]).toEqual({
      spaceId: 'gone',
      outcome: 'error',
      error: 'ENOENT: sessions directory /x/gone/sessions vanished',
    });
    expect(report.spaces[1]).toMatchObject({ spaceId: 'fine', outcome: 'enqueued' });

    await close();
  });

  it('picks up a space added by a config reload on the next tick', async () => {
    const { config, queue, close } = await openQueueBench('reload', { spaces: [makeSpace('alpha')] });
    const inspection = createFakeInspection({ alpha: { settledNew: 0 }, added: { settledNew: 7 } });
    const scheduler = schedulerOn(config, queue, inspection);
    scheduler.start();

    expect((await scheduler.tick()).spaces.map((space) => space.spaceId)).toEqual(['alpha']);
    scheduler.reload({ ...config, spaces: [makeSpace('alpha'), makeSpace('added')] });
    const report = await scheduler.tick();

    expect(report.spaces[1]).toMatchObject({ spaceId: 'added', outcome: 'enqueued' });
    expect(() => scheduler.reload({ ...config, schedule: 'every tuesday' })).toThrow(
      /not a valid cron expression/,
    );
    await scheduler.stop();
    expect(scheduler.state).toBe('stopped');

    await close();
  });

  it('deduplicates a manual enqueue while a scheduled job for the space is queued', async () => {
    const { config, queue, enqueue, close } = await openQueueBench('manual', {}, fixedNow);
    const inspection = createFakeInspection({ alpha: { settledNew: 5 } });
    const scheduler = schedulerOn(config, queue, inspection);

    const [scheduled] = (await scheduler.tick()).spaces;
    const manual = await enqueue('alpha', { force: true, trigger: 'manual' });

    expect(scheduled).toMatchObject({ outcome: 'enqueued' });
    expect(manual).toEqual({ status: 'duplicate', jobId: (scheduled as { jobId: string }).jobId });
    expect(await queue.getWaitingCount()).toBe(1);

    await close();
  });
});
