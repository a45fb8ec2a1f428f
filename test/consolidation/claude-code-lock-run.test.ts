import { copyFile, mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import { LockBusyError, ModelError } from '../../src/errors.js';
import { CLAUDE_CODE_LOCK_FILE } from '../../src/space/claude-code-lock.js';
import { readLedger } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { snapshotDirectory, FORCED_RUN, RUN_NOW } from '../support/space.js';
import { CLAUDE_CODE_FIXTURES, FIXTURE } from '../transcripts/helpers.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { useClaudeCodeProject } from './helpers.js';

const YESTERDAY = new Date('2026-11-28T09:00:00Z');
const LAST_DREAM = new Date('2026-11-26T08:00:00Z');

const fake = useFakeAnthropic();
// A Claude Code project folder: its transcripts, and its memory folder with Claude Code's lock.
const project = useClaudeCodeProject(fake);
let lockFile: string;
beforeEach(async () => {
  await mkdir(project().space.memoryDir, { recursive: true });
  for (const name of Object.values(FIXTURE)) {
    const target = join(project().space.sessionsDir, name);
    await copyFile(join(CLAUDE_CODE_FIXTURES, name), target);
    await utimes(target, YESTERDAY, YESTERDAY);
  }
  await writeFile(
    join(project().space.memoryDir, 'MEMORY.md'),
    '# My notes\n- [Tabs](tabs.md) — I indent with tabs\n',
  );
  lockFile = join(project().space.memoryDir, CLAUDE_CODE_LOCK_FILE);
});

async function setLock(body: string, mtime: Date): Promise<void> {
  await writeFile(lockFile, body);
  await utimes(lockFile, mtime, mtime);
}
async function lockState(): Promise<{ body: string; mtimeMs: number }> {
  return { body: await readFile(lockFile, 'utf8'), mtimeMs: (await stat(lockFile)).mtimeMs };
}

describe("a run in a claude-code space and Claude Code's .consolidate-lock", () => {
  it('writes nothing and says why while Claude Code holds the lock; the job is a busy space', async () => {
    await setLock(String(process.ppid), new Date(RUN_NOW.getTime() - 5 * 60_000));
    const before = snapshotDirectory(project().space.memoryDir);
    const failure = await project()
      .run()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LockBusyError);
    expect((failure as Error).message).toMatch(/^my-repo: Claude Code is consolidating this memory folder/);
    expect(fake.server.requests).toHaveLength(0);
    expect(snapshotDirectory(project().space.memoryDir)).toEqual(before);
    // dreamd's own lock was given back: the next run is not locked out by it.
    await setLock('', LAST_DREAM);
    fake.server.setDefault(scriptedExtractor([]));
    expect((await project().run()).status).toBe('completed');
  });

  it('takes a stale lock and leaves the run time as its mtime after a successful run', async () => {
    await setLock(String(process.ppid), LAST_DREAM);
    fake.server.setDefault(scriptedExtractor([]));
    const summary = await project().run();
    expect(summary.status).toBe('completed');
    expect(Object.keys((await readLedger(project().space.memoryDir)).sessions)).toHaveLength(3);
    expect(await lockState()).toEqual({ body: '', mtimeMs: RUN_NOW.getTime() });
  });

  it('puts the previous mtime back when the run fails', async () => {
    await setLock('', LAST_DREAM);
    fake.server.setDefault(faults.serverError());
    await expect(project().run()).rejects.toBeInstanceOf(ModelError);
    expect(await lockState()).toEqual({ body: '', mtimeMs: LAST_DREAM.getTime() });
    expect(Object.keys((await readLedger(project().space.memoryDir)).sessions)).toHaveLength(0);
  });

  it('puts the previous mtime back when the gates are closed and nothing is written', async () => {
    await setLock('', LAST_DREAM);
    const summary = await createConsolidator({
      config: project().test.config,
      model: () => createModel(project().test.config.model),
      now: () => RUN_NOW,
    })(project().space, { ...FORCED_RUN, force: false });
    expect(summary.status).toBe('skipped');
    expect(await lockState()).toEqual({ body: '', mtimeMs: LAST_DREAM.getTime() });
  });
});
