import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../support/cli.js';

interface DoctorOutput {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string; fix?: string }[];
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dreamd-doctor-'));
  mkdirSync(join(dir, 'sessions'));
  return dir;
}

describe('dreamd doctor', () => {
  it('explains what is missing on a machine without Redis or a key, and exits 1', async () => {
    const run = await runCliCaptured(['doctor', '--json'], {
      cwd: workspace(),
      env: { PATH: '/nonexistent' },
    });
    expect(run.code).toBe(1);
    const output = run.json<DoctorOutput>();
    const redis = output.checks.find((check) => check.name === 'redis')!;
    expect(redis.ok).toBe(false);
    expect(redis.fix).toMatch(/REDIS_URL.*redis-server.*docker compose/);
    const model = output.checks.find((check) => check.name === 'model')!;
    expect(model.ok).toBe(false);
    expect(model.fix).toContain('ANTHROPIC_API_KEY');
  });

  it('passes with redis-server on the PATH and a key', async () => {
    const run = await runCliCaptured(['doctor'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
    });
    expect(run.stdout).toContain('ok   redis');
    expect(run.code).toBe(0);
  });

  it('reports an unreachable REDIS_URL', async () => {
    const run = await runCliCaptured(['doctor', '--json'], {
      cwd: workspace(),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', REDIS_URL: 'redis://127.0.0.1:1' },
    });
    expect(run.code).toBe(1);
    expect(run.json<DoctorOutput>().checks.find((check) => check.name === 'redis')?.detail).toMatch(
      /does not answer/,
    );
  });

  it('reports a missing sessions directory with the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamd-doctor-'));
    const run = await runCliCaptured(['doctor', '--json'], { cwd: dir, env: { ANTHROPIC_API_KEY: 'k' } });
    const sessions = run
      .json<DoctorOutput>()
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
