import { readLedger } from '../../src/space/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { queueCounts, queuedWorkspace, startWorkspaceDaemon, waitFor } from './support/daemon.js';
import { checkMemory, cleanUpWorkspaces, plantedFacts, writeSession } from './support/harness.js';
import { expectOneRun } from './support/one-run.js';
import { useFakeAnthropic, useRedis } from '../support/fixtures.js';

/**
 * redis-server is killed with SIGKILL and started again twice while the daemon works through a queue: once while
 * a run talks to the model (and others wait), once later in the queue. The daemon recovers by itself, every
 * queued space is consolidated, and no session is consolidated twice (ledger and run history).
 */

const SPACES = 8;
const ids = Array.from({ length: SPACES }, (_, index) => `redis-${index + 1}`);
const planted = new Map(ids.map((id, index) => [id, plantedFacts(2, `r${index + 1}x`)]));

const fake = useFakeAnthropic({
  latencyMs: 150,
  answer: scriptedExtractor([...planted.values()].flatMap((entry) => entry.facts)),
  scope: 'all',
});
const redis = useRedis();
afterAll(() => {
  cleanUpWorkspaces();
});

describe('redis crashes', () => {
  it('consolidates every queued space exactly once across two SIGKILLs of redis-server', async () => {
    const { workspace, prefix } = queuedWorkspace({
      name: 'redis-crash',
      ids,
      modelUrl: fake.url,
      redisUrl: redis.url,
      concurrency: 2,
    });
    for (const id of ids) {
      for (const [session, lines] of planted.get(id)!.sessions)
        writeSession(workspace.space(id).sessionsDir, session, lines);
    }
    const daemon = startWorkspaceDaemon(workspace);
    await daemon.start();
    try {
      const tick = await daemon.tick();
      expect(tick.spaces.filter((space) => space.outcome === 'enqueued')).toHaveLength(SPACES);

      // First crash: a run is waiting on the model, the other jobs wait in the queue.
      await waitFor(() => fake.server.requests.length >= 1, 10_000, 'the first model request');
      await redis.kill();
      const atFirstKill = fake.server.requests.length;
      // The outage lasts until the daemon has seen it: its health says Redis is down.
      await waitFor(
        async () => (await daemon.health()).redis === 'down',
        10_000,
        'the daemon to see Redis down',
      );
      await redis.restart();

      // Second crash: further down the queue.
      await waitFor(() => fake.server.requests.length >= SPACES / 2, 30_000, 'half of the model requests');
      await redis.kill();
      const atSecondKill = fake.server.requests.length;
      // Both crashes hit a queue with work left in it.
      expect(atFirstKill).toBeLessThan(SPACES);
      expect(atSecondKill).toBeLessThan(SPACES);
      await waitFor(
        async () => (await daemon.health()).redis === 'down',
        10_000,
        'the daemon to see Redis down',
      );
      await redis.restart();

      const consolidated = async (): Promise<boolean> => {
        for (const id of ids) {
          if (Object.keys((await readLedger(workspace.space(id).memoryDir)).sessions).length < 2)
            return false;
        }
        return true;
      };
      await waitFor(consolidated, 60_000, 'every space to be consolidated');
      await waitFor(
        async () => {
          const counts = await queueCounts(redis.url, prefix);
          return counts.wait + counts.active + counts.delayed + counts.prioritized === 0;
        },
        30_000,
        'the queue to drain',
      );
      expect((await daemon.health()).ok).toBe(true);
      const counts = await queueCounts(redis.url, prefix);
      expect(counts.failed).toBe(0);
      expect(counts.stalled).toBe(0);
      expect(counts.completed).toBeGreaterThanOrEqual(SPACES);
    } finally {
      await daemon.stop();
    }

    for (const id of ids) {
      const memoryDir = workspace.space(id).memoryDir;
      const check = await checkMemory(memoryDir);
      expect(check.problems, id).toEqual([]);
      expect(check.activeTitles, id).toEqual(
        planted
          .get(id)!
          .facts.map((fact) => fact.title)
          .sort(),
      );
      // One consolidation per session: a run repeated after the crash found nothing new and wrote nothing.
      const run = await expectOneRun(memoryDir, id, 2);
      expect([...run.summary.sessions].sort(), id).toEqual([...planted.get(id)!.sessions.keys()].sort());
    }
  }, 150_000);
});
