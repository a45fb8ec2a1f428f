import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SpaceStatus } from '../../src/cli/space-status.js';
import { createLogger } from '../../src/daemon/logger.js';
import { createDreamd } from '../../src/dreamd.js';
import { CLAUDE_CODE_HOLD_FILE } from '../../src/space/claude-code-hold.js';
import { runCliCaptured } from '../support/cli.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { cleanUpWorkspaces, createWorkspace, runChild, type Workspace } from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * kill -9 of a run that holds Claude Code's `.consolidate-lock`: the lock is left with a dead PID and a fresh
 * mtime, which Claude Code's 24-hour gate would read as a consolidation that never committed. The recovery,
 * before a command reads memory or when a daemon starts, puts back the mtime the lock had before the run.
 */

/** Claude Code's last consolidation, as the lock's mtime says, before dreamd's run. */
const LAST_DREAM = new Date('2026-11-26T08:00:00Z');
const CHILD_TIMEOUT_MS = 300_000;

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

function lockState(memoryDir: string): { body: string; mtimeMs: number } {
  const file = join(memoryDir, '.consolidate-lock');
  return { body: readFileSync(file, 'utf8'), mtimeMs: statSync(file).mtimeMs };
}

/** A space whose memory folder Claude Code also consolidates, and a run of it killed after the model's answer. */
async function crashedRun(): Promise<{ workspace: Workspace; memoryDir: string }> {
  const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'cc', examples: true }] });
  const memoryDir = workspace.space('cc').memoryDir;
  const lockFile = join(memoryDir, '.consolidate-lock');
  writeFileSync(lockFile, '');
  utimesSync(lockFile, LAST_DREAM, LAST_DREAM);
  const child = await runChild(
    'run-child.ts',
    [workspace.configPath, 'cc', 'kill', 'after-extraction'],
    CHILD_TIMEOUT_MS,
  );
  expect(child.signal, child.stderr).toBe('SIGKILL');
  // What the kill left: the dead run's PID and a fresh mtime, and dreamd's record of the mtime before.
  const left = lockState(memoryDir);
  expect(left.body).toMatch(/^\d+$/);
  expect(left.mtimeMs).not.toBe(LAST_DREAM.getTime());
  expect(JSON.parse(readFileSync(join(memoryDir, CLAUDE_CODE_HOLD_FILE), 'utf8'))).toMatchObject({
    pid: Number(left.body),
    priorMtimeMs: LAST_DREAM.getTime(),
  });
  return { workspace, memoryDir };
}

describe("kill -9 of a run holding Claude Code's .consolidate-lock", () => {
  it('gets the mtime from before the run back at the recovery before a command reads memory', async () => {
    const { workspace, memoryDir } = await crashedRun();
    const status = await runCliCaptured(['--config', workspace.configPath, '--json', 'status', 'cc'], {
      cwd: workspace.root,
    });
    expect(status.code, status.stderr).toBe(0);
    expect(lockState(memoryDir)).toEqual({ body: '', mtimeMs: LAST_DREAM.getTime() });
    expect(status.data<SpaceStatus[]>()[0]?.recovery).toContain(
      `put back the mtime of .consolidate-lock that a killed run of dreamd's had moved (${LAST_DREAM.toISOString()})`,
    );
    // A run afterwards is a real consolidation: the lock's mtime is then that run's commit time.
    const run = await runChild('run-child.ts', [workspace.configPath, 'cc', 'run'], CHILD_TIMEOUT_MS);
    expect(run.code, run.stderr).toBe(0);
    expect(lockState(memoryDir).body).toBe('');
    expect(lockState(memoryDir).mtimeMs).toBeGreaterThan(LAST_DREAM.getTime());
  });

  it('gets the mtime from before the run back when a daemon starts', async () => {
    const { workspace, memoryDir } = await crashedRun();
    const dreamd = createDreamd({
      getConfig: () => workspace.config,
      logger: createLogger({ level: 'silent' }),
    });
    await dreamd.recoverSpaces();
    expect(lockState(memoryDir)).toEqual({ body: '', mtimeMs: LAST_DREAM.getTime() });
  });
});
