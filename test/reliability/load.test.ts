import { afterAll, describe, expect, it } from 'vitest';
import { queueCounts, queuedWorkspace, startWorkspaceDaemon, waitFor } from './support/daemon.js';
import { cleanUpWorkspaces, writeSession } from './support/harness.js';
import { expectOneRun } from './support/one-run.js';
import { useFakeAnthropic, useRedis } from '../support/fixtures.js';

/**
 * Many spaces ready at once, one scheduler tick, 4 jobs at a time, the real consolidator and the real Redis.
 *
 * 60 spaces: fifteen times the workers, so every worker takes many jobs and they contend for each one the
 * whole run. The same at scale (1,000 jobs on 1, 2 and 4 worker processes, every failed or skipped run
 * counted) is the benchmark's queue figure, `npm run bench` (`-- --quick` in CI: 200 jobs); this test ran
 * 500 spaces until it cost `npm test` two minutes on a two-core machine.
 *
 * The 4 workers are one worker pool with concurrency 4 in this process rather than 4 processes: BullMQ hands
 * out jobs through Redis the same way in both cases (an atomic move from wait to active under a lock), and on
 * the 2-core CI machine four tsx processes would spend the time budget starting up. Jobs moving between worker
 * processes (kill -9 of one) are covered by test/daemon/faults.test.ts and by redis.test.ts here.
 */

const SPACES = 60;
const CONCURRENCY = 4;
/** A generous bound on the memory the whole test process (vitest included) may grow by while it runs. */
const RSS_GROWTH_LIMIT_BYTES = 512 * 1024 * 1024;

const fake = useFakeAnthropic({
  scope: 'all',
  facts: [
    { trigger: 'load-test fact', type: 'user', title: 'Favourite editor', body: 'The user edits in Helix.' },
  ],
});
const redis = useRedis();
afterAll(() => {
  cleanUpWorkspaces();
});

describe('load', () => {
  it('runs 60 ready spaces on 4 concurrent workers: all complete, none twice, none stalled, memory bounded', async () => {
    const ids = Array.from({ length: SPACES }, (_, index) => `load-${String(index + 1).padStart(3, '0')}`);
    const { workspace, prefix } = queuedWorkspace({
      name: 'load',
      ids,
      modelUrl: fake.url,
      redisUrl: redis.url,
      concurrency: CONCURRENCY,
    });
    for (const id of ids)
      writeSession(workspace.space(id).sessionsDir, `${id}-s1`, ['A load-test fact: I edit in Helix.']);

    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    let maxActive = 0;
    const daemon = startWorkspaceDaemon(workspace);
    await daemon.start();
    try {
      const tick = await daemon.tick();
      expect(tick.spaces.filter((space) => space.outcome === 'enqueued')).toHaveLength(SPACES);
      await waitFor(
        async () => {
          const counts = await queueCounts(redis.url, prefix);
          maxActive = Math.max(maxActive, counts.active);
          return counts.completed + counts.failed >= SPACES;
        },
        120_000,
        'every job to finish',
      );
      const counts = await queueCounts(redis.url, prefix);
      expect(counts).toMatchObject({
        completed: SPACES,
        failed: 0,
        wait: 0,
        active: 0,
        delayed: 0,
        stalled: 0,
        prioritized: 0,
      });
      // A second tick finds nothing to do: no space runs twice.
      const again = await daemon.tick();
      expect(again.spaces.filter((space) => space.outcome === 'enqueued')).toHaveLength(0);
    } finally {
      clearInterval(sampler);
      await daemon.stop();
    }
    expect(maxActive).toBeLessThanOrEqual(CONCURRENCY);
    expect(fake.server.requests).toHaveLength(SPACES);

    for (const id of ids) await expectOneRun(workspace.space(id).memoryDir, id, 1);
    const growth = peak - baseline;
    expect(growth).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
    process.stdout.write(
      `load: ${SPACES} spaces, peak RSS ${Math.round(peak / 1048576)} MiB (+${Math.round(growth / 1048576)} MiB)\n`,
    );
  }, 180_000);
});
