import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { spaceStatus } from '../../src/cli/space-status.js';
import { listRuns } from '../../src/space/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { MANUAL, cleanUpWorkspaces, consolidatorFor, createWorkspace, readTree } from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * dreamd's state (`.dreamd/`) that someone else put there: a stray file, a symbolic link to a folder or file
 * outside the memory folder, a folder where a file should be. Each case runs a real consolidation of the
 * example sessions against the fake model server: the run completes or is refused with a message that names
 * the path; status, the scheduler's inspection and doctor say why; nothing is written outside the memory
 * folder; and once the person removes what the message names, the next run completes.
 */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

interface Case {
  readonly workspace: ReturnType<typeof createWorkspace>;
  readonly memoryDir: string;
  /** A folder next to the memory folder, with one file in it, that nothing may change. */
  readonly outside: string;
}

function setUp(): Case {
  const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'home', examples: true }] });
  const memoryDir = workspace.space('home').memoryDir;
  const outside = join(workspace.root, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'theirs.json'), '{"version":1,"not":"dreamd"}\n');
  mkdirSync(join(memoryDir, '.dreamd'), { recursive: true });
  return { workspace, memoryDir, outside };
}

async function runOnce(test: Case) {
  return consolidatorFor(test.workspace.config)(test.workspace.space('home'), MANUAL);
}

/** A run refused with a message that names `relative`; status and doctor say the space cannot run, and why. */
async function expectRefused(test: Case, relative: string): Promise<void> {
  const before = readTree(test.outside);
  await expect(runOnce(test)).rejects.toThrow(relative);
  await expect(runOnce(test)).rejects.toThrow(/symbolic link|should be a file|should be a folder/);
  const status = await spaceStatus(test.workspace.space('home'), { config: test.workspace.config });
  expect(status.gates.open).toBe(false);
  expect(status.error).toContain(relative);
  expect(status.error).toContain('cannot run');
  const doctor = await runDoctor(test.workspace.config, { env: {} });
  const state = doctor.find((check) => check.name === 'space home: dreamd state');
  expect(state?.ok).toBe(false);
  expect(state?.detail).toContain(relative);
  // Nothing was written through the link.
  expect(readTree(test.outside)).toEqual(before);
}

/** After the person removes what was named, runs work again. */
async function expectWorksAgain(test: Case, relative: string): Promise<void> {
  rmSync(join(test.memoryDir, ...relative.split('/')), { recursive: true, force: true });
  const summary = await runOnce(test);
  expect(summary.status).toBe('completed');
  expect(await listRuns(test.memoryDir)).toHaveLength(1);
  const status = await spaceStatus(test.workspace.space('home'), { config: test.workspace.config });
  expect(status.error).toBeNull();
}

describe('state that is not dreamd’s', () => {
  it('ignores a stray .DS_Store in .dreamd/staging: every run works and status stays clean', async () => {
    const test = setUp();
    mkdirSync(join(test.memoryDir, '.dreamd', 'staging'));
    writeFileSync(join(test.memoryDir, '.dreamd', 'staging', '.DS_Store'), 'Bud1\0\0\0');
    const status = await spaceStatus(test.workspace.space('home'), { config: test.workspace.config });
    expect(status.error).toBeNull();
    expect(status.gates.open).toBe(true);
    expect((await runOnce(test)).status).toBe('completed');
    expect((await runOnce(test)).status).not.toBe('failed');
    expect(readdirSync(join(test.memoryDir, '.dreamd', 'staging'))).toEqual(['.DS_Store']);
  });

  /** Puts something that is not dreamd's at `path` in the memory folder. */
  type Plant = (test: Case, path: string) => void;
  const linkToFolderOutside: Plant = (test, path) => {
    rmSync(path, { recursive: true, force: true });
    symlinkSync(test.outside, path);
  };
  const linkToFileOutside: Plant = (test, path) => symlinkSync(join(test.outside, 'theirs.json'), path);
  const folder: Plant = (_test, path) => mkdirSync(path);

  it.each<[string, string, Plant]>([
    ['a .dreamd that is a symbolic link to a folder outside', '.dreamd', linkToFolderOutside],
    ['a .dreamd/runs that is a symbolic link', '.dreamd/runs', linkToFolderOutside],
    ['a .dreamd/staging that is a symbolic link', '.dreamd/staging', linkToFolderOutside],
    ['a ledger that is a symbolic link to a file outside', '.dreamd/ledger.json', linkToFileOutside],
    ['a lock that is a symbolic link to a file outside', '.dreamd/lock', linkToFileOutside],
    ['a pending.json that is a symbolic link to a file outside', '.dreamd/pending.json', linkToFileOutside],
    ['a folder where the ledger should be', '.dreamd/ledger.json', folder],
  ])(
    'refuses %s, names it, writes nothing outside, and runs again once it is removed',
    async (_what, relative, plant) => {
      const test = setUp();
      plant(test, join(test.memoryDir, ...relative.split('/')));
      await expectRefused(test, relative);
      expect(readdirSync(test.outside)).toEqual(['theirs.json']);
      await expectWorksAgain(test, relative);
    },
  );
});
