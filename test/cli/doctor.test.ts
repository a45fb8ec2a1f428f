import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliCaptured, type CliRun } from '../support/cli.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { startRedis } from '../../harness/redis.js';
import { Redis } from 'ioredis';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

interface DoctorOutput {
  checks: { name: string; ok: boolean; detail: string; fix?: string }[];
}

function workspace(): string {
  const dir = tempDirRemovedAfterTest('doctor');
  mkdirSync(join(dir, 'sessions'));
  return dir;
}

let anthropic: FakeAnthropicServer;
beforeEach(async () => {
  anthropic = await startFakeAnthropicServer();
});
afterEach(async () => {
  await anthropic.close();
});

function check(output: DoctorOutput, name: string) {
  const found = output.checks.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no check ${name} in ${JSON.stringify(output.checks)}`);
  return found;
}

/** `dreamd <args>` in a fresh workspace whose model is `llama3.2` behind an OpenAI-compatible endpoint at `url`. */
function runWithLocalModel(args: string[], url: string): Promise<CliRun> {
  return runCliCaptured(args, {
    cwd: workspace(),
    env: { DREAMD_MODEL_PROVIDER: 'openai-compatible', DREAMD_MODEL: 'llama3.2', OPENAI_BASE_URL: url },
  });
}

/** Runs `use` with an OpenAI-compatible endpoint that serves no models list and answers "p"; closes it after. */
async function withNoModelsList(use: (proxy: FakeOpenAIServer) => Promise<void>): Promise<void> {
  const proxy = await startFakeOpenAIServer({ models: null });
  proxy.setDefault({ text: 'p' });
  try {
    await use(proxy);
  } finally {
    await proxy.close();
  }
}

describe('dreamd doctor', () => {
  it('explains what is missing on a machine without a key, and says no Redis is needed, exit 1', async () => {
    const run = await runCliCaptured(['doctor', '--json'], {
      cwd: workspace(),
      env: { PATH: '/nonexistent' },
    });
    expect(run.code).toBe(1);
    expect(run.json()).toMatchObject({ ok: false, command: 'doctor' });
    const output = run.data<DoctorOutput>();
    expect(output.checks.find((check) => check.name === 'redis')).toBeUndefined();
    const queue = output.checks.find((check) => check.name === 'queue')!;
    expect(queue.ok).toBe(true);
    expect(queue.detail).toMatch(/embedded queue/);
    const model = output.checks.find((check) => check.name === 'model')!;
    expect(model.ok).toBe(false);
    expect(model.fix).toContain('ANTHROPIC_API_KEY');
  });

  it('passes without Redis, with a key and an endpoint that answers', async () => {
    const run = await runCliCaptured(['doctor'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url },
    });
    expect(run.stdout).toContain('ok   queue');
    expect(run.stdout).toContain('ok   model endpoint');
    expect(run.code).toBe(0);
  });

  it('shows the URL from ANTHROPIC_BASE_URL and probes it with the key', async () => {
    const run = await runCliCaptured(['doctor', '--json'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url },
    });
    const output = run.data<DoctorOutput>();
    expect(check(output, 'model').detail).toBe(
      `anthropic claude-haiku-5-5 at ${anthropic.url} (from ANTHROPIC_BASE_URL), key set`,
    );
    expect(check(output, 'model endpoint')).toMatchObject({
      ok: true,
      detail: `${anthropic.url} answers (2 models listed)`,
    });
    expect(anthropic.modelListRequests).toHaveLength(1);
    expect(anthropic.modelListRequests[0]?.authorization).toBe('Bearer sk-ant-test');
  });

  it('fails when the model endpoint does not answer, and says what to point where', async () => {
    const run = await runCliCaptured(['doctor', '--json'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
    });
    expect(run.code).toBe(1);
    const endpoint = check(run.data<DoctorOutput>(), 'model endpoint');
    expect(endpoint.ok).toBe(false);
    expect(endpoint.detail).toContain('http://127.0.0.1:1');
    expect(endpoint.fix).toContain('ANTHROPIC_BASE_URL');
  });

  it('tells a local-model user to add /v1 when the base URL lacks it', async () => {
    const local = await startFakeOpenAIServer();
    try {
      const withoutVersion = local.url.replace(/\/v1$/, '');
      const run = await runCliCaptured(['doctor', '--json'], {
        cwd: workspace(),
        env: {
          DREAMD_MODEL_PROVIDER: 'openai-compatible',
          DREAMD_MODEL: 'llama3.2',
          OPENAI_BASE_URL: withoutVersion,
        },
      });
      expect(run.code).toBe(1);
      const output = run.data<DoctorOutput>();
      expect(check(output, 'model').detail).toContain(`at ${withoutVersion} (from OPENAI_BASE_URL)`);
      expect(check(output, 'model endpoint').fix).toContain('add /v1');

      const fixed = await runWithLocalModel(['doctor', '--json'], local.url);
      expect(check(fixed.data<DoctorOutput>(), 'model endpoint').ok).toBe(true);
      expect(local.modelListRequests).toHaveLength(1);
    } finally {
      await local.close();
    }
  });

  it('spends no token on an endpoint that serves no models list, and says how to check the key', async () => {
    await withNoModelsList(async (proxy) => {
      const run = await runWithLocalModel(['doctor', '--json'], proxy.url);
      expect(check(run.data<DoctorOutput>(), 'model endpoint')).toMatchObject({
        ok: true,
        detail: expect.stringMatching(
          /serves no models list \(HTTP 404 for GET \/models\): the key and llama3\.2 were not checked; `dreamd doctor --probe-messages`/,
        ),
      });
      expect(proxy.requests).toHaveLength(0);
    });
  });

  it('with --probe-messages, passes an endpoint that serves no models list by asking it one one-token request', async () => {
    await withNoModelsList(async (proxy) => {
      const run = await runWithLocalModel(['doctor', '--json', '--probe-messages'], proxy.url);
      expect(check(run.data<DoctorOutput>(), 'model endpoint')).toMatchObject({
        ok: true,
        detail: expect.stringMatching(
          /answers a one-token request to llama3\.2 \(it serves no models list: HTTP 404/,
        ),
      });
      expect(proxy.requests).toHaveLength(1);
      expect(proxy.requests[0]!.body).toMatchObject({ model: 'llama3.2', max_tokens: 1 });
    });
  });

  it('sends nothing to the model with --no-probe', async () => {
    const run = await runCliCaptured(['doctor', '--no-probe', '--json'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: anthropic.url },
    });
    expect(run.data<DoctorOutput>().checks.map((entry) => entry.name)).not.toContain('model endpoint');
    expect(anthropic.modelListRequests).toHaveLength(0);
  });

  it('reports an unreachable REDIS_URL', async () => {
    const run = await runCliCaptured(['doctor', '--json', '--no-probe'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', REDIS_URL: 'redis://127.0.0.1:1' },
    });
    expect(run.code).toBe(1);
    expect(run.data<DoctorOutput>().checks.find((check) => check.name === 'redis')?.detail).toMatch(
      /does not answer/,
    );
  });

  it('reports a Redis that answers but refuses writes, with the fix, and one that takes them', async () => {
    const redis = await startRedis();
    try {
      const env = { ANTHROPIC_API_KEY: 'sk-ant-test', REDIS_URL: redis.url };
      const healthy = await runCliCaptured(['doctor', '--json', '--no-probe'], { cwd: workspace(), env });
      expect(check(healthy.data<DoctorOutput>(), 'redis')).toMatchObject({
        ok: true,
        detail: expect.stringMatching(/takes writes/),
      });

      const client = new Redis(redis.url);
      await client.call('REPLICAOF', '127.0.0.1', '1');
      const refused = await runCliCaptured(['doctor', '--json', '--no-probe'], { cwd: workspace(), env });
      await client.call('REPLICAOF', 'NO', 'ONE');
      client.disconnect();
      expect(refused.code).toBe(1);
      expect(check(refused.data<DoctorOutput>(), 'redis')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/refuses writes/),
        fix: expect.stringMatching(/read-only replica.*primary/),
      });
    } finally {
      await redis.stop();
    }
  });

  it('reports a missing sessions directory with the fix', async () => {
    const dir = tempDirRemovedAfterTest('doctor');
    const run = await runCliCaptured(['doctor', '--json', '--no-probe'], {
      cwd: dir,
      env: { ANTHROPIC_API_KEY: 'k' },
    });
    const sessions = run
      .data<DoctorOutput>()
      .checks.find((check) => check.name === 'space default: sessions')!;
    expect(sessions.ok).toBe(false);
    expect(sessions.fix).toContain('mkdir -p');
  });

  it('exits 2 with the field named when the config is invalid', async () => {
    const run = await runCliCaptured(['doctor'], { cwd: workspace(), env: { DREAMD_MIN_SESSIONS: 'many' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DREAMD_MIN_SESSIONS');
  });

  it('exits 2 on an unknown command', async () => {
    const run = await runCliCaptured(['frobnicate'], { cwd: workspace() });
    expect(run.code).toBe(2);
  });
});
