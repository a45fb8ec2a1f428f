import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon/daemon.js';
import { findFreePort } from '../../harness/redis-server.js';
import { failOnLeftovers, openRedis, startDreamdDaemon } from '../daemon/harness.js';
import { runCliCaptured } from '../support/cli.js';
import { uniquePrefix } from '../../harness/redis.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { createTestSpace } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';

failOnLeftovers();

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

/** A real daemon (real Redis, real pipeline, fake model) and the environment a CLI needs to reach it. */
async function startDaemon(extraEnv: Record<string, string> = {}): Promise<{
  daemon: Daemon;
  env: Record<string, string>;
  cwd: string;
  stop: () => Promise<void>;
}> {
  const redis = await openRedis();
  const port = await findFreePort();
  const env = {
    REDIS_URL: redis.url,
    DREAMD_REDIS_PREFIX: uniquePrefix('cli'),
    DREAMD_PORT: String(port),
    ...extraEnv,
  };
  const test = createTestSpace({ modelUrl: fake.url, examples: true, env });
  const daemon = await startDreamdDaemon(test.config);
  return {
    daemon,
    stop: async () => {
      await daemon.stop();
      await redis.stop();
    },
    cwd: test.root,
    env: { ...env, DREAMD_MODEL_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
  };
}

describe('dreamd consolidate with a daemon up', () => {
  it('queues the run on the daemon, follows it and prints its summary', async () => {
    const { daemon, env, cwd, stop } = await startDaemon();
    const run = await runCliCaptured(['consolidate', '--json'], { cwd, env });
    expect(run.code).toBe(0);
    const output = run.data<{
      via: string;
      results: { ok: boolean; jobId: string; summary: { status: string; sessions: string[] } }[];
    }>();
    expect(output.via).toBe(daemon.address);
    expect(output.results[0]!.jobId).toBeDefined();
    expect(output.results[0]!.summary.status).toBe('completed');
    expect(output.results[0]!.summary.sessions).toHaveLength(7);

    const status = await runCliCaptured(['status', '--json'], { cwd, env });
    const [space] =
      status.data<{ queue?: { waiting: number; active: number; failed: number }; lastRun: unknown }[]>();
    expect(space!.queue).toMatchObject({ waiting: 0, active: 0, failed: 0 });
    expect(status.stderr).not.toMatch(/cannot run jobs/);
    await stop();
  });

  it("status says so when the daemon's Redis refuses writes", async () => {
    const { env, cwd, stop } = await startDaemon();
    const client = new Redis(env.REDIS_URL!);
    await client.call('REPLICAOF', '127.0.0.1', '1');
    const status = await runCliCaptured(['status'], { cwd, env });
    await client.call('REPLICAOF', 'NO', 'ONE');
    client.disconnect();
    expect(status.stderr).toMatch(/cannot run jobs now: Redis is a read-only replica/);
    await stop();
  });

  it('returns at once with --no-wait, and reports a second request for the same space as a duplicate', async () => {
    const { env, cwd, stop } = await startDaemon();
    fake.server.setLatency(1_500);
    const first = await runCliCaptured(['consolidate', '--no-wait', '--json'], { cwd, env });
    const second = await runCliCaptured(['consolidate', '--no-wait', '--json'], { cwd, env });
    const [queued] = first.data<{ results: { queued: boolean; jobId: string; duplicate: boolean }[] }>()
      .results;
    const [again] = second.data<{ results: { queued: boolean; jobId: string; duplicate: boolean }[] }>()
      .results;
    expect(queued).toMatchObject({ queued: true, duplicate: false });
    expect(again).toMatchObject({ queued: true, duplicate: true, jobId: queued!.jobId });
    await stop();
  });

  it('runs in this process with --in-process even when a daemon is up', async () => {
    const { env, cwd, stop } = await startDaemon();
    const run = await runCliCaptured(['consolidate', '--in-process', '--json'], { cwd, env });
    expect(run.data<{ via: string }>().via).toBe('in-process');
    await stop();
  });

  it('does not use a daemon that serves other directories: it runs here and says why', async () => {
    const { env, stop, daemon } = await startDaemon();
    // Another project on the same machine, same default port: its own sessions and memory.
    const other = createTestSpace({ modelUrl: fake.url, examples: true, env });
    const run = await runCliCaptured(['consolidate', '--json'], { cwd: other.root, env });
    expect(run.code).toBe(0);
    const output = run.data<{ via: string; daemonSkipped: string; results: { ok: boolean }[] }>();
    expect(output.via).toBe('in-process');
    expect(output.daemonSkipped).toMatch(/serves space "default" from other directories/);
    expect(output.results[0]!.ok).toBe(true);
    expect(existsSync(join(other.space.memoryDir, 'MEMORY.md'))).toBe(true);
    expect(existsSync(join(daemon.config.spaces[0]!.memoryDir, 'MEMORY.md'))).toBe(false);

    const text = await runCliCaptured(['consolidate', '--force'], { cwd: other.root, env });
    expect(text.stdout).toMatch(/^in this process: the daemon at http:\/\/127\.0\.0\.1:\d+ \(pid \d+/);

    // Without a token any local user may ask who the daemon is: no folder and no config path in the answer.
    const identity = await (await fetch(`${daemon.address}/daemon`)).text();
    const served = daemon.config.spaces[0]!;
    expect(identity).not.toContain(served.memoryDir);
    expect(identity).not.toContain(served.sessionsDir);
    expect(JSON.parse(identity)).not.toHaveProperty('configSource');
    await stop();
  });

  it('sends the configured token to a loopback daemon that has one, and says so when it has none', async () => {
    const token = 'a-very-secret-token-of-32-chars!';
    const { daemon, env, cwd, stop } = await startDaemon({ DREAMD_API_TOKEN: token });
    expect(daemon.address).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect((await fetch(`${daemon.address}/daemon`)).status).toBe(401);
    const status = await runCliCaptured(['status', '--json'], { cwd, env });
    expect(status.data<{ queue?: unknown }[]>()[0]!.queue).toMatchObject({ waiting: 0 });

    const { DREAMD_API_TOKEN: _omitted, ...tokenless } = env;
    const refused = await runCliCaptured(['status'], { cwd, env: tokenless });
    expect(refused.stderr).toMatch(/refused the request without the right token; set DREAMD_API_TOKEN/);
    await stop();
  });

  it('does not use a server that is not dreamd', async () => {
    const port = await findFreePort();
    const foreign = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status":"skipped"}');
    });
    await new Promise<void>((resolve) => foreign.listen(port, '127.0.0.1', resolve));
    try {
      const test = createTestSpace({
        modelUrl: fake.url,
        examples: true,
        env: { DREAMD_PORT: String(port) },
      });
      const run = await runCliCaptured(['consolidate', '--json'], {
        cwd: test.root,
        env: {
          DREAMD_PORT: String(port),
          DREAMD_MODEL_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: 'sk-ant-test-key',
        },
      });
      const output = run.data<{ via: string; daemonSkipped: string; results: { ok: boolean }[] }>();
      expect(output.via).toBe('in-process');
      expect(output.daemonSkipped).toMatch(/not a dreamd daemon/);
      expect(output.results[0]!.ok).toBe(true);
    } finally {
      await new Promise((resolve) => foreign.close(resolve));
    }
  });
});
