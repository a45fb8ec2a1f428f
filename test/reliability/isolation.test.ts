import { randomBytes } from 'node:crypto';
import { eventually } from '../support/eventually.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createRecall } from '../../src/agent/recall.js';
import { scriptedExtractor, type ScriptedFact } from '../../harness/scripted-extractor.js';
import { queuedWorkspace, startWorkspaceDaemon } from './support/daemon.js';
import { cleanUpWorkspaces, readTree, writeSession } from './support/harness.js';
import { useFakeAnthropic, useRedis } from '../support/fixtures.js';

/**
 * 20 spaces served by one daemon (real Redis, scheduler tick, 4 concurrent jobs, the real consolidator), each
 * with its own canary strings: no canary of one space may appear in another space's model requests, memory
 * directory, recall results or HTTP API answer.
 */

const SPACES = 20;
const ids = Array.from({ length: SPACES }, (_, index) => `space-${String(index + 1).padStart(2, '0')}`);
const canaries = new Map(ids.map((id) => [id, `canary${randomBytes(5).toString('hex')}`]));

function canariesIn(text: string): string[] {
  return ids.filter((id) => text.includes(canaries.get(id)!));
}

const fake = useFakeAnthropic({ scope: 'all' });
const redis = useRedis();
afterAll(() => {
  cleanUpWorkspaces();
});

describe('isolation', () => {
  it('keeps each of 20 spaces to its own data in requests, memory, recall and the API', async () => {
    const facts: ScriptedFact[] = ids.map((id) => ({
      trigger: canaries.get(id)!,
      type: 'project',
      title: 'Project codename',
      body: `The project codename is ${canaries.get(id)!}.`,
    }));
    fake.server.setDefault(scriptedExtractor(facts));
    const { workspace } = queuedWorkspace({
      name: 'isolation',
      ids,
      modelUrl: fake.url,
      redisUrl: redis.url,
      concurrency: 4,
    });
    for (const id of ids) {
      const canary = canaries.get(id)!;
      const dir = workspace.space(id).sessionsDir;
      writeSession(dir, `${id}-a`, [`Our project codename is ${canary}, keep it in mind.`]);
      writeSession(dir, `${id}-b`, [`Reminder for the ${canary} launch: the demo is on Friday.`], {
        date: '2026-11-21',
      });
    }

    const daemon = startWorkspaceDaemon(workspace, {
      lockDurationMs: 10_000,
      shutdownTimeoutMs: 2_000,
      abortGraceMs: 500,
    });
    await daemon.start();
    try {
      const tick = await daemon.tick();
      expect(tick.spaces.filter((space) => space.outcome === 'enqueued')).toHaveLength(SPACES);
      const app = daemon.server!.app;
      const finished = async (): Promise<number> => {
        let done = 0;
        for (const id of ids) {
          const answer = (await app.inject({ method: 'GET', url: `/spaces/${id}` })).json<{
            lastRun: { outcome: string } | null;
          }>();
          if (answer.lastRun?.outcome === 'completed') done += 1;
        }
        return done;
      };
      await eventually(async () => (await finished()) >= SPACES, 60_000, 'every space to finish its run');
      expect(await finished()).toBe(SPACES);

      // API: each space's answer holds its own canary (the last run's diff) and no other.
      for (const id of ids) {
        const body = (await app.inject({ method: 'GET', url: `/spaces/${id}` })).body;
        // The job keeps the slim summary (the diff stays in the run record), so the body may carry no canary at
        // all; it must never carry another space's.
        expect(
          canariesIn(body).filter((canary) => canary !== id),
          `GET /spaces/${id}`,
        ).toEqual([]);
      }
    } finally {
      await daemon.stop();
    }

    // Requests: every model request carries the canary of exactly one space; every space was asked about.
    expect(fake.server.requests.length).toBeGreaterThanOrEqual(SPACES);
    const asked = new Set<string>();
    for (const request of fake.server.requests) {
      const found = canariesIn(JSON.stringify(request.body));
      expect(found).toHaveLength(1);
      asked.add(found[0]!);
    }
    expect(asked.size).toBe(SPACES);

    for (const id of ids) {
      // Memory: every file of the space, .dreamd/ included, names only its own canary.
      const files = readTree(workspace.space(id).memoryDir);
      expect(files.get('project.md'), id).toContain(canaries.get(id)!);
      for (const [path, content] of files) {
        for (const other of canariesIn(content)) expect(other, `${id}/${path}`).toBe(id);
      }
      // Recall over the space's memory directory finds its codename and nothing of another space.
      const results = await createRecall({ memoryDir: workspace.space(id).memoryDir }).recall(
        'project codename',
      );
      expect(results.length, id).toBeGreaterThan(0);
      expect(canariesIn(JSON.stringify(results)), id).toEqual([id]);
    }
  });
});
