import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../harness/redis-server.js';
import { failOnLeftovers, openRedis } from '../daemon/harness.js';
import { runCliCaptured } from '../support/cli.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { uniquePrefix } from '../../harness/redis.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

failOnLeftovers();

const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;

function workspace(): string {
  const dir = tempDirRemovedAfterTest('start');
  mkdirSync(join(dir, 'sessions'));
  return dir;
}

/** Runs the real binary until `ready` sees its output, then SIGTERM; resolves with the exit code and output. */
function runUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  ready: (output: string) => Promise<boolean>,
): Promise<{ code: number | null; output: string; sawReady: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let sawReady = false;
    let checking = false;
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (sawReady || checking) return;
      checking = true;
      void ready(output).then((ok) => {
        checking = false;
        if (ok && !sawReady) {
          sawReady = true;
          child.kill('SIGTERM');
        }
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, sawReady });
    });
  });
}

describe('dreamd start / worker / scheduler', () => {
  it('start serves /healthz and /spaces, and stops cleanly on SIGTERM', async () => {
    const redis = await openRedis();
    const port = await findFreePort();
    const env = {
      ...process.env,
      REDIS_URL: redis.url,
      DREAMD_REDIS_PREFIX: uniquePrefix('start'),
      DREAMD_PORT: String(port),
      ANTHROPIC_API_KEY: 'sk-ant-test',
    };
    let health: unknown;
    let spaces: unknown;
    const result = await runUntil(['start'], env, workspace(), async (output) => {
      if (!output.includes('dreamd is running')) return false;
      health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
      spaces = await (await fetch(`http://127.0.0.1:${port}/spaces`)).json();
      return true;
    });
    expect(result.sawReady).toBe(true);
    const startLines = result.output.split('\n').filter((line) => /"msg":"dreamd[^"]*running"/.test(line));
    expect(startLines).toHaveLength(1);
    expect(JSON.parse(startLines[0]!)).toMatchObject({ queue: 'redis', roles: { workers: true } });
    expect(health).toMatchObject({ ok: true, redis: 'up', workers: 'running', scheduler: 'started' });
    expect(spaces).toMatchObject({ spaces: [{ id: 'default' }] });
    expect(result.code).toBe(0);
    await redis.stop();
  });

  it('start needs nothing but Node: no REDIS_URL and no redis-server, it serves /healthz and `consolidate` goes through it', async () => {
    const model = await startFakeAnthropicServer();
    model.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const port = await findFreePort();
    const root = workspace();
    cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), { recursive: true });
    // A PATH with Node and nothing else: no redis-server anywhere on it.
    const env: NodeJS.ProcessEnv = {
      PATH: dirname(process.execPath),
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      DREAMD_PORT: String(port),
      DREAMD_MODEL_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      // The scheduler's first tick must not consolidate the examples before the manual run does.
      DREAMD_MIN_SESSIONS: '100',
    };
    let health: unknown;
    let consolidate: { code: number; stdout: string } | undefined;
    try {
      const result = await runUntil(['start'], env, root, async (output) => {
        if (!output.includes('dreamd is running')) return false;
        health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
        consolidate = await runCliCaptured(['consolidate', '--force'], { cwd: root, env: { ...env } });
        return true;
      });
      expect(result.sawReady).toBe(true);
      expect(result.output).not.toMatch(/needs Redis/);
      expect(health).toMatchObject({ ok: true, queue: 'embedded', redis: 'absent', workers: 'running' });
      expect(consolidate?.code).toBe(0);
      expect(consolidate?.stdout).toMatch(
        new RegExp(`^via the daemon at http://127\\.0\\.0\\.1:${port} \\(pid \\d+\\)`),
      );
      expect(consolidate?.stdout).toMatch(/run \S+ completed/);
      expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).toContain('spicy');
      expect(result.code).toBe(0);
    } finally {
      await model.close();
    }
  });

  it('worker runs workers only and stops on SIGTERM', async () => {
    const redis = await openRedis();
    const env = {
      ...process.env,
      REDIS_URL: redis.url,
      DREAMD_REDIS_PREFIX: uniquePrefix('worker'),
      ANTHROPIC_API_KEY: 'sk-ant-test',
    };
    const result = await runUntil(['worker'], env, workspace(), async (output) =>
      output.includes('dreamd is running'),
    );
    expect(result.sawReady).toBe(true);
    expect(result.output).toMatch(/"workers":true/);
    expect(result.output).toMatch(/"scheduler":false/);
    expect(result.code).toBe(0);
    await redis.stop();
  });

  it('scheduler needs no model key', async () => {
    const redis = await openRedis();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: redis.url,
      DREAMD_REDIS_PREFIX: uniquePrefix('scheduler'),
    };
    delete env.ANTHROPIC_API_KEY;
    const result = await runUntil(['scheduler'], env, workspace(), async (output) =>
      output.includes('dreamd is running'),
    );
    expect(result.sawReady).toBe(true);
    expect(result.output).toMatch(/"scheduler":true/);
    expect(result.code).toBe(0);
    await redis.stop();
  });

  it('refuses to start workers without a model key, before touching Redis, with exit code 2', async () => {
    const result = await runCliCaptured(['start'], {
      cwd: workspace(),
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
  });
});
