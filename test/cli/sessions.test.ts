import { spawn } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SessionRow } from '../../src/cli/session-list.js';
import { runCliCaptured } from '../support/cli.js';
import { EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

const CLAUDE_CODE_FIXTURES = fileURLToPath(new URL('../fixtures/claude-code/', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

/** A temp directory with a copy of the example sessions in `sessions/`. */
function workspace(): string {
  const root = tempDirRemovedAfterTest('cli-sessions');
  cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), { recursive: true });
  return root;
}

function writeConfig(root: string, config: unknown): void {
  writeFileSync(join(root, 'dreamd.config.json'), JSON.stringify(config, null, 2));
}

/** Message counts straight from the example files, independent of the readers. */
function exampleMessageCounts(): Record<string, number> {
  return Object.fromEntries(
    readdirSync(EXAMPLE_SESSIONS_DIR)
      .filter((name) => name.endsWith('.json'))
      .map((name) => {
        const parsed = JSON.parse(readFileSync(join(EXAMPLE_SESSIONS_DIR, name), 'utf8')) as {
          messages: unknown[];
        };
        return [name, parsed.messages.length];
      }),
  );
}

describe('dreamd sessions list', () => {
  it('reads the shared Claude Code fixtures and sessions/ with correct message counts', async () => {
    const root = workspace();
    writeConfig(root, {
      spaces: [
        { id: 'my-repo', sessions: CLAUDE_CODE_FIXTURES, memory: './cc-memory', format: 'claude-code' },
        { id: 'shop', sessions: './sessions', memory: './memory' },
      ],
    });
    const run = await runCliCaptured(['sessions', 'list', '--json'], {
      cwd: root,
      env: { DREAMD_QUIET_MINUTES: '0' },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const rows = run.data<SessionRow[]>();

    const claudeCode = Object.fromEntries(
      rows.filter((row) => row.space === 'my-repo').map((row) => [row.file, row.messages]),
    );
    expect(claudeCode).toEqual({
      'claude-reliability__hello-world-script.jsonl': 8,
      'entireio-cli__e2-775d4606d9__summary-task.jsonl': 4,
      'entireio-cli__a6-e4c2a0fbd1__compact-boundary.jsonl': 29,
    });
    const shop = rows.filter((row) => row.space === 'shop');
    expect(Object.fromEntries(shop.map((row) => [row.file, row.messages]))).toEqual(exampleMessageCounts());
    expect(rows.every((row) => row.status === 'settled')).toBe(true);
    expect(shop[0]).toMatchObject({
      space: 'shop',
      file: '2026-11-02-lisbon-delivery.json',
      path: join(root, 'sessions', '2026-11-02-lisbon-delivery.json'),
      sessionId: '2026-11-02-lisbon-delivery',
      status: 'settled',
      reason: null,
      newMessages: 10,
    });
    expect(shop[0]!.size).toBeGreaterThan(0);
    expect(Date.parse(shop[0]!.mtime)).not.toBeNaN();
  });

  it('reports live and broken files, the broken one with its reason, and a totals line', async () => {
    const root = workspace();
    writeFileSync(join(root, 'sessions', 'zz-broken.json'), '{ "messages": [ oops');
    writeFileSync(
      join(root, 'sessions', 'zz-live.json'),
      JSON.stringify({
        startedAt: '2026-11-29T10:00:00Z',
        messages: [{ role: 'user', content: 'still typing' }],
      }),
    );
    const json = await runCliCaptured(['sessions', 'list', '--json'], { cwd: root });
    expect(json.code).toBe(0);
    const rows = json.data<SessionRow[]>();
    expect(rows.find((row) => row.file === 'zz-live.json')).toMatchObject({ status: 'live', messages: 1 });
    const broken = rows.find((row) => row.file === 'zz-broken.json')!;
    expect(broken).toMatchObject({ status: 'broken', reason: 'invalid-json', messages: null });
    expect(broken.message).toContain('zz-broken.json');

    const human = await runCliCaptured(['sessions', 'list'], { cwd: root });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/broken zz-broken\.json \(invalid-json\)/);
    expect(human.stdout).toContain(
      '9 sessions: 7 settled, 1 live, 0 consolidated, 1 broken, 0 kept out; 61 messages',
    );
    expect(human.stdout).toContain(
      'live: still being written, or changed in the last 30 min; read once unchanged for 30 min (gates.quietMinutes',
    );
  });

  it('exits 2 naming the configured spaces when the space does not exist', async () => {
    const run = await runCliCaptured(['sessions', 'list', 'nope'], { cwd: workspace() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no space "nope"; configured spaces: default');
  });

  it('exits 1 with the fix when the sessions directory is missing', async () => {
    const root = tempDirRemovedAfterTest('cli-sessions');
    const run = await runCliCaptured(['sessions', 'list', '--json'], { cwd: root });
    expect(run.code).toBe(1);
    expect(run.data()).toEqual([]);
    expect(run.stderr).toMatch(/space "default": sessions directory .*sessions cannot be read.*create it/);
  });

  it('runs as the real binary: node bin/dreamd.js sessions list --json', async () => {
    const root = workspace();
    const child = spawn(
      process.execPath,
      [join(REPOSITORY, 'bin', 'dreamd.js'), 'sessions', 'list', '--json'],
      {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const rows = (JSON.parse(stdout) as { data: SessionRow[] }).data;
    expect(rows.map((row) => row.messages)).toEqual(Object.values(exampleMessageCounts()));
  });
});
