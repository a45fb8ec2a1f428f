import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { listRuns, readLedger } from '../../src/space/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis, uniquePrefix } from '../../harness/redis.js';
import { queueCounts, startWorkspaceDaemon, waitFor } from './support/daemon.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import {
  EXAMPLE_SESSIONS_DIR,
  MANUAL,
  SUPPORT_DIR,
  checkMemory,
  consolidatorFor,
  createWorkspace,
  runChild,
  cleanUpWorkspaces,
} from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * Two runs of one space at once, each in its own process: exactly one commits, the other is refused by the lock.
 * And a person editing a topic file while a run is between reading memory and writing it keeps the edit.
 */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

/** Starts run-child.ts holding the space's lock at `step` until `releaseFile` exists; resolves once it holds. */
async function startHolder(configPath: string, spaceId: string, step: string, releaseFile: string) {
  const holder = spawn(
    process.execPath,
    ['--import', 'tsx', join(SUPPORT_DIR, 'run-child.ts'), configPath, spaceId, 'hold', step, releaseFile],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: holder.stdout });
  const output: string[] = [];
  const holding = new Promise<void>((resolve) =>
    lines.on('line', (line) => {
      output.push(line);
      if (line === 'holding') resolve();
    }),
  );
  await holding;
  const finished = async (): Promise<{ runId: string; status: string }> => {
    if (holder.exitCode === null) await once(holder, 'exit');
    const result = output.find((line) => line.startsWith('result '));
    return JSON.parse(result!.slice('result '.length)) as { runId: string; status: string };
  };
  return { holder, finished };
}

describe('concurrency', () => {
  it('lets exactly one of two processes consolidate a space; the other gets LockBusyError', async () => {
    const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'shared', examples: true }] });
    const space = workspace.space('shared');
    const releaseFile = join(workspace.root, 'release');
    const { holder, finished } = await startHolder(
      workspace.configPath,
      'shared',
      'after-extraction',
      releaseFile,
    );
    let summary: { runId: string; status: string };
    try {
      // The first run holds the lock, has asked the model, and has not written yet: a second process starts.
      const second = await runChild('run-child.ts', [workspace.configPath, 'shared', 'run']);
      expect(second.code).toBe(1);
      expect(second.stdout).toContain('"error":"LockBusyError"');
      expect(second.stdout).toMatch(/locked by reliability child \d+/);
      // And a run in this process too.
      const third = await consolidatorFor(workspace.config)(space, MANUAL).then(
        () => 'ran',
        (error: unknown) => (error instanceof Error ? error.name : String(error)),
      );
      expect(third).toBe('LockBusyError');
      writeFileSync(releaseFile, '');
      summary = await finished();
    } finally {
      if (holder.exitCode === null) holder.kill('SIGKILL');
    }
    expect(holder.exitCode).toBe(0);
    expect(summary.status).toBe('completed');

    const runs = await listRuns(space.memoryDir);
    expect(runs.map((run) => run.runId)).toEqual([summary.runId]);
    const ledger = await readLedger(space.memoryDir);
    expect(Object.values(ledger.sessions).map((entry) => entry.runId)).toEqual(Array(7).fill(summary.runId));
    expect((await checkMemory(space.memoryDir)).problems).toEqual([]);
  });

  it('keeps a hand edit made to a topic file while a run is in progress', async () => {
    const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'edited' }] });
    const space = workspace.space('edited');
    const copy = (name: string): void =>
      copyFileSync(join(EXAMPLE_SESSIONS_DIR, name), join(space.sessionsDir, name));
    copy('2026-11-02-lisbon-delivery.json');
    copy('2026-11-09-coffee-usual.json');
    await consolidatorFor(workspace.config)(space, MANUAL);
    const userFile = join(space.memoryDir, 'user.md');
    expect(readFileSync(userFile, 'utf8')).toContain('oat flat white');

    // New sessions arrive; while the run is between extraction and writing, a person edits user.md.
    copy('2026-11-05-dinner-friday.json');
    copy('2026-11-26-moved-to-porto.json');
    const edit = 'The usual at Fábrica is now a double espresso (edited by hand).';
    const summary = await consolidatorFor(workspace.config, {
      now: () => new Date('2026-11-30T12:00:00Z'),
      faultInjection: (step) => {
        if (step !== 'after-extraction') return;
        const text = readFileSync(userFile, 'utf8');
        writeFileSync(userFile, text.replace('The usual at Fábrica is an oat flat white.', edit));
      },
    })(space, MANUAL);
    expect(summary.status).toBe('completed');

    const after = readFileSync(userFile, 'utf8');
    expect(after).toContain(edit);
    expect(after).not.toContain('oat flat white');
    // The run's own changes are there as well.
    expect(after).toContain("Doesn't eat spicy food");
    expect(after).toContain('Lives in Porto');
    expect((await checkMemory(space.memoryDir)).problems).toEqual([]);
  });

  it('runs a space once when a manual run, an API request and two daemons on one Redis all want it', async () => {
    const redis = await startRedis();
    const workspace = createWorkspace({
      modelUrl: fake.url,
      spaces: [{ id: 'wanted', examples: true }],
      redisUrl: redis.url,
      redisPrefix: uniquePrefix('two-daemons'),
    });
    const space = workspace.space('wanted');
    const releaseFile = join(workspace.root, 'release');
    const manual = await startHolder(workspace.configPath, 'wanted', 'after-extraction', releaseFile);
    const first = startWorkspaceDaemon(workspace);
    const second = startWorkspaceDaemon(workspace);
    try {
      await first.start();
      await second.start();
      // The manual run holds the lock: the scheduled ticks of both daemons see the gate closed.
      for (const daemon of [first, second]) {
        const tick = await daemon.tick();
        expect(tick.spaces.map((entry) => entry.outcome)).toEqual(['gates-closed']);
      }
      // An API request is queued once; the same request to the other daemon is a duplicate.
      const queued = await first.server!.app.inject({
        method: 'POST',
        url: '/spaces/wanted/consolidate',
        payload: { force: true },
      });
      expect(queued.statusCode).toBe(202);
      const duplicate = await second.server!.app.inject({
        method: 'POST',
        url: '/spaces/wanted/consolidate',
        payload: { force: true },
      });
      expect(duplicate.statusCode).toBe(409);
      // Its job meets the lock and waits (delayed, no attempt spent) until the manual run is done.
      await waitFor(
        async () => (await queueCounts(redis.url, workspace.config.redisPrefix)).delayed === 1,
        20_000,
        'the job to back off',
      );

      writeFileSync(releaseFile, '');
      const summary = await manual.finished();
      expect(summary.status).toBe('completed');
      await waitFor(
        async () => (await queueCounts(redis.url, workspace.config.redisPrefix)).completed === 1,
        20_000,
        'the job to finish',
      );
      const counts = await queueCounts(redis.url, workspace.config.redisPrefix);
      expect(counts).toMatchObject({ failed: 0, wait: 0, active: 0, delayed: 0 });
      const view = (await first.server!.app.inject({ method: 'GET', url: '/spaces/wanted' })).json<{
        lastRun: { outcome: string; summary: { status: string; sessions: string[] } };
      }>();
      expect(view.lastRun.outcome).toBe('completed');
      expect(view.lastRun.summary.status).toBe('skipped');
      expect(view.lastRun.summary.sessions).toEqual([]);

      const runs = await listRuns(space.memoryDir);
      expect(runs.map((run) => run.runId)).toEqual([summary.runId]);
      const ledger = await readLedger(space.memoryDir);
      expect(Object.values(ledger.sessions).map((entry) => entry.runId)).toEqual(
        Array(7).fill(summary.runId),
      );
    } finally {
      if (!existsSync(releaseFile)) writeFileSync(releaseFile, '');
      if (manual.holder.exitCode === null) manual.holder.kill('SIGKILL');
      await first.stop();
      await second.stop();
      await redis.stop();
    }
  });
});
