/**
 * Claude Code's `.consolidate-lock` binds every command that rewrites memory, not only `consolidate`: with a
 * live holder, `rollback` and `memory forget` write nothing and say so; with a stale one they go ahead and
 * give the lock its previous mtime back; `status` and `doctor` name the holder.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SpaceStatus } from '../../src/cli/space-status.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/daemon/logger.js';
import { createDreamd } from '../../src/dreamd.js';
import type { Fact } from '../../src/memory/types.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import type { CliRun } from '../support/cli.js';
import { snapshotDirectory, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';

const MINUTE = 60_000;

/** `ago` milliseconds before now, in whole seconds (as file systems and Claude Code keep an mtime). */
function before(ago: number): Date {
  return new Date(Math.floor((Date.now() - ago) / 1000) * 1000);
}

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const temp = useTempDir('cli-claude-code-lock');
let root: string;
let memoryDir: string;
let lockFile: string;
let runId: string;
let factId: string;

function cli(argv: readonly string[]): Promise<CliRun> {
  return cliAt(root, fake.url, argv);
}

/** Claude Code's lock as Claude Code leaves it: its PID as the body, the mtime as the time it took it. */
function setLock(body: string, mtime: Date): void {
  writeFileSync(lockFile, body);
  utimesSync(lockFile, mtime, mtime);
}
function lockState(): { body: string; mtimeMs: number } {
  return { body: readFileSync(lockFile, 'utf8'), mtimeMs: statSync(lockFile).mtimeMs };
}

/** The PID of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  if (child.pid === undefined) throw new Error('the child process did not start');
  return child.pid;
}

beforeEach(async () => {
  root = temp.path;
  memoryDir = join(root, 'memory');
  lockFile = join(memoryDir, '.consolidate-lock');
  cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), { recursive: true });
  const consolidated = await cli(['consolidate', '--json']);
  expect(consolidated.code, consolidated.stderr).toBe(0);
  const history = await cli(['history', '--json']);
  runId = history.data<{ runId: string }[]>()[0]?.runId ?? '';
  const shown = await cli(['memory', 'show', '--json']);
  factId = shown.data<{ facts: Fact[] }>().facts[0]?.id ?? '';
  expect(runId).not.toBe('');
  expect(factId).not.toBe('');
});

describe("rollback and forget under Claude Code's .consolidate-lock", () => {
  it('refuse, naming Claude Code, exit 1 and write nothing while a live process holds it', async () => {
    // The test runner's parent process: alive for as long as this test runs, and not this process.
    const taken = before(5 * MINUTE);
    setLock(String(process.ppid), taken);
    const files = snapshotDirectory(memoryDir);

    const rollback = await cli(['rollback', runId]);
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toMatch(/Claude Code is consolidating this memory folder/);
    expect(rollback.stderr).toContain(`pid ${process.ppid}`);
    expect(rollback.stderr).toMatch(/dreamd rollback wrote nothing/);

    const forget = await cli(['memory', 'forget', factId]);
    expect(forget.code).toBe(1);
    expect(forget.stderr).toMatch(/Claude Code is consolidating this memory folder/);

    expect(snapshotDirectory(memoryDir)).toEqual(files);
    expect(lockState()).toEqual({ body: String(process.ppid), mtimeMs: taken.getTime() });
  });

  it('go ahead past a lock whose PID is dead, and give it back its previous mtime', async () => {
    const taken = before(5 * MINUTE);
    setLock(String(await deadPid()), taken);
    const rollback = await cli(['rollback', runId]);
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(rollback.stdout).toContain(`rolled back ${runId}`);
    // A rollback is not a consolidation: Claude Code's "last consolidation" time is what it was.
    expect(lockState()).toEqual({ body: '', mtimeMs: taken.getTime() });
    // The run created the memory files: rolled back, they are gone again.
    expect(existsSync(join(memoryDir, 'MEMORY.md'))).toBe(false);
  });

  it('go ahead past a lock older than an hour, even with a live PID', async () => {
    const taken = before(2 * 60 * MINUTE);
    setLock(String(process.ppid), taken);
    const forget = await cli(['memory', 'forget', factId]);
    expect(forget.code, forget.stderr).toBe(0);
    expect(forget.stdout).toContain(`forgot ${factId}`);
    expect(lockState()).toEqual({ body: '', mtimeMs: taken.getTime() });
  });
});

describe('status and doctor while Claude Code holds .consolidate-lock', () => {
  it('name the holder, its PID and since when; the gates are closed', async () => {
    const taken = before(5 * MINUTE);
    setLock(String(process.ppid), taken);

    const status = await cli(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const space = status.data<SpaceStatus[]>()[0];
    expect(space?.claudeCodeLock).toMatchObject({ pid: process.ppid, since: taken.toISOString() });
    expect(space?.gates.reasons.join('\n')).toContain(
      `Claude Code holds .consolidate-lock (pid ${process.ppid}`,
    );

    const text = await cli(['status']);
    expect(text.stdout).toContain(`held by Claude Code (.consolidate-lock, pid ${process.ppid})`);
    expect(text.stdout).not.toMatch(/lock\s+free/);

    const doctor = await cli(['doctor', '--json']);
    const checks = doctor.data<{ checks: { name: string; ok: boolean; detail: string }[] }>().checks;
    const check = checks.find((candidate) => candidate.name === "space default: Claude Code's lock");
    expect(check?.detail).toContain(`held by Claude Code (.consolidate-lock, pid ${process.ppid}`);

    setLock('', taken);
    const free = await cli(['status', '--json']);
    expect(free.data<SpaceStatus[]>()[0]?.claudeCodeLock).toBeNull();
  });
});

describe('the HTTP API while Claude Code holds .consolidate-lock', () => {
  it('names the holder in the space view, with its gates closed', async () => {
    const taken = before(5 * MINUTE);
    setLock(String(process.ppid), taken);
    const config = loadConfig({
      env: { DREAMD_MODEL_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-test-key', DREAMD_PORT: '0' },
      cwd: root,
    });
    const dreamd = createDreamd({
      getConfig: () => config,
      logger: createLogger({ level: 'silent' }),
      env: {},
    });
    const daemon = dreamd.daemon({ tickOnStart: false });
    await daemon.start();
    try {
      const view = (await (await fetch(`${daemon.address ?? ''}/spaces/default`)).json()) as {
        inspection: { claudeCodeLock?: { pid: number; since: string; ageMs: number } };
        gates: { open: boolean; reasons: string[] };
      };
      expect(view.inspection.claudeCodeLock).toMatchObject({ pid: process.ppid, since: taken.toISOString() });
      expect(view.gates.open).toBe(false);
      expect(view.gates.reasons.join('\n')).toContain(
        `Claude Code holds .consolidate-lock (pid ${process.ppid}`,
      );
    } finally {
      await daemon.stop();
    }
  });
});
