import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { SessionRow } from '../../src/cli/session-list.js';
import { acquireLock } from '../../src/space/index.js';
import { runCliCaptured, type CliRun } from '../support/cli.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { snapshotDirectory, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { cliAt, exampleWorkspace, useFakeAnthropic } from '../support/fixtures.js';

const FIRST_FOUR = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
  '2026-11-12-no-semicolons.json',
];
const LAST_THREE = [
  '2026-11-16-postgres-migration.json',
  '2026-11-19-grafana-dashboard.json',
  '2026-11-26-moved-to-porto.json',
];

/** `data` of consolidate's JSON envelope; `ok` is the envelope's. */
interface ConsolidateOutput {
  via: string;
  results: ConsolidateOutcome[];
}

interface HistoryRowOutput {
  runId: string;
  kind: string;
  status: string;
  rollbackOf: string | null;
  rolledBackBy: string | null;
  sessions: number;
  added: number;
  calls: number;
}

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

/** A temp workspace whose `sessions/` holds the named example sessions (all when none are named). */
function workspace(files?: readonly string[]): string {
  return exampleWorkspace(files, 'dreamd-cli-consolidate-');
}

function addSessions(root: string, files: readonly string[]): void {
  for (const name of files) cpSync(join(EXAMPLE_SESSIONS_DIR, name), join(root, 'sessions', name));
}

function cli(
  root: string,
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  return cliAt(root, fake.url, argv, env);
}

/** The memory files a person reads (the state under .dreamd/ left out). */
function memoryFiles(root: string): Map<string, string> {
  const files = snapshotDirectory(join(root, 'memory'));
  for (const name of [...files.keys()]) if (name.startsWith('.dreamd')) files.delete(name);
  return files;
}

describe('dreamd consolidate', () => {
  it('consolidates in this process and ends with a summary of what changed', async () => {
    const root = workspace();
    const run = await cli(root, ['consolidate']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/space default: run run-\S+ completed in /);
    expect(run.stdout).toMatch(/sessions\s+7/);
    expect(run.stdout).toMatch(/changes\s+6 added, 0 updated, 1 superseded, 0 quarantined/);
    expect(run.stdout).toMatch(/model\s+anthropic:claude-haiku-5-5, 1 call\b/);
    expect(run.stdout).toMatch(/tokens\s+[\d,]+ in, [\d,]+ out, [\d,]+ cache read/);
    expect(run.stdout).toMatch(/\n {2}cost {7}\$\d+\.\d+/);
    expect(run.stdout).toMatch(/undo\s+dreamd rollback run-\S+ --space default/);
    expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).toContain('Lives in Porto');
  });

  it('reports a problem of MEMORY.md once, as a memory problem, not as a session set aside', async () => {
    const root = workspace();
    mkdirSync(join(root, 'memory'));
    writeFileSync(
      join(root, 'memory', 'MEMORY.md'),
      `# Memory\n\n- ${'a very long hand-written line '.repeat(8)}\n`,
    );
    const run = await cli(root, ['consolidate']);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n').filter((line) => line.includes('longer than 150 characters'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^ {2}memory {5}MEMORY\.md: 1 line\(s\) outside dreamd's block are longer than 150/,
      ),
    ]);
    expect(run.stdout).not.toContain('set aside');
  });

  it('calls the model at ANTHROPIC_BASE_URL when model.baseUrl is unset', async () => {
    const root = workspace();
    const run = await cli(root, ['consolidate', '--json'], {
      DREAMD_MODEL_BASE_URL: undefined,
      ANTHROPIC_BASE_URL: fake.url,
    });
    expect(run.code).toBe(0);
    expect(fake.server.requests.length).toBeGreaterThan(0);
    expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).toContain('Lives in Porto');
  });

  it('with --json reports each space as a result with the run summary', async () => {
    const root = workspace();
    const run = await cli(root, ['consolidate', '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ ok: true, command: 'consolidate' });
    const output = run.data<ConsolidateOutput>();
    expect(output.results).toHaveLength(1);
    const result = output.results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    expect(result.spaceId).toBe('default');
    expect(result.summary).toMatchObject({ status: 'completed', added: 6, superseded: 1, calls: 1 });
    expect(result.summary.sessions).toHaveLength(7);
    expect(result.summary.usage.inputTokens).toBeGreaterThan(0);
  });

  it('consolidate, history, history show and rollback restore the exact previous bytes', async () => {
    const root = workspace(FIRST_FOUR);
    const first = await cli(root, ['consolidate', '--force', '--json']);
    expect(first.code).toBe(0);
    const before = memoryFiles(root);
    expect(before.get('user.md')).toContain('Lisbon');

    addSessions(root, LAST_THREE);
    const second = await cli(root, ['consolidate', 'default', '--force', '--json']);
    expect(second.code).toBe(0);
    const secondResult = second.data<ConsolidateOutput>().results[0]!;
    if (!secondResult.ok) throw new Error(secondResult.error.message);
    const secondRunId = secondResult.summary.runId;
    expect(memoryFiles(root)).not.toEqual(before);

    const listed = await cli(root, ['sessions', 'list', '--json']);
    expect(
      listed.data<SessionRow[]>().every((row) => row.status === 'consolidated' && row.messages! > 0),
    ).toBe(true);

    const history = await cli(root, ['history', '--json']);
    expect(history.code).toBe(0);
    const rows = history.data<HistoryRowOutput[]>();
    expect(rows.map((row) => row.kind)).toEqual(['consolidation', 'consolidation']);
    expect(rows[0]).toMatchObject({ runId: secondRunId, sessions: 3, calls: 1, rolledBackBy: null });
    expect(rows[1]!.sessions).toBe(4);

    const shown = await cli(root, ['history', 'show', secondRunId, '--json']);
    expect(shown.code).toBe(0);
    const record = shown.data<{ runId: string; files: string[]; summary: { diff: string } }>();
    expect(record.files).toContain('user.md');
    expect(record.summary.diff).toMatch(/^\+.*Porto/m);
    const shownText = await cli(root, ['history', 'show', secondRunId]);
    expect(shownText.stdout).toContain(`run ${secondRunId} (consolidation) in space default`);
    expect(shownText.stdout).toMatch(/^\+.*Porto/m);
    // `--limit` is the list's: given to `show`, it is named as the mistake, not ignored.
    const limited = await cli(root, ['history', 'show', secondRunId, '--limit', '2']);
    expect(limited.code).toBe(2);
    expect(limited.stderr).toContain('--limit: history show shows one run, whole; drop --limit');

    const rollback = await cli(root, ['rollback', secondRunId, '--json']);
    expect(rollback.stderr).toBe('');
    expect(rollback.code).toBe(0);
    expect(rollback.data<{ rolledBack: string; runs: { rollbackOf: string }[] }>()).toMatchObject({
      rolledBack: secondRunId,
      runs: [{ rollbackOf: secondRunId }],
    });
    expect(memoryFiles(root)).toEqual(before);
    const pending = (await cli(root, ['sessions', 'list', '--json'])).data<SessionRow[]>();
    expect(
      pending
        .filter((row) => row.status === 'settled')
        .map((row) => row.file)
        .sort(),
    ).toEqual([...LAST_THREE].sort());

    const after = (await cli(root, ['history', '--json'])).data<HistoryRowOutput[]>();
    expect(after.map((row) => row.kind)).toEqual(['rollback', 'consolidation', 'consolidation']);
    expect(after[0]!.rollbackOf).toBe(secondRunId);
    expect(after[1]!.rolledBackBy).toBe(after[0]!.runId);
    const human = await cli(root, ['history', '--limit', '2']);
    expect(human.stdout.trim().split('\n')).toHaveLength(3);
    expect(human.stdout).toContain(`rolled back by ${after[0]!.runId}`);
  });

  it('refuses to roll back a run that later runs built on, names them and the flag, then cascades', async () => {
    const root = workspace(FIRST_FOUR);
    const first = (await cli(root, ['consolidate', '--force', '--json'])).data<ConsolidateOutput>()
      .results[0]!;
    addSessions(root, LAST_THREE);
    const second = (await cli(root, ['consolidate', '--force', '--json'])).data<ConsolidateOutput>()
      .results[0]!;
    if (!first.ok || !second.ok) throw new Error('consolidation failed');

    const refused = await cli(root, ['rollback', first.summary.runId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`blocking runs, newest last: ${second.summary.runId}`);
    expect(refused.stderr).toContain(
      `to go ahead: dreamd rollback ${first.summary.runId} --space default --cascade`,
    );
    const refusedJson = await cli(root, ['rollback', first.summary.runId, '--json']);
    expect(refusedJson.code).toBe(1);
    expect(refusedJson.json<{ error: { blockingRuns: string[] } }>().error.blockingRuns).toEqual([
      second.summary.runId,
    ]);

    const cascaded = await cli(root, ['rollback', first.summary.runId, '--cascade', '--json']);
    expect(cascaded.code).toBe(0);
    expect(cascaded.data<{ runs: { rollbackOf: string }[] }>().runs.map((run) => run.rollbackOf)).toEqual([
      second.summary.runId,
      first.summary.runId,
    ]);
    expect(memoryFiles(root).size).toBe(0);
  });

  it('asks for --force before overwriting a hand edit made after the run', async () => {
    const root = workspace();
    const result = (await cli(root, ['consolidate', '--json'])).data<ConsolidateOutput>().results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    const userFile = join(root, 'memory', 'user.md');
    writeFileSync(userFile, `${readFileSync(userFile, 'utf8')}\nA note written by hand.\n`);
    const refused = await cli(root, ['rollback', result.summary.runId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/user\.md changed since the run/);
    expect(refused.stderr).toContain('--force');
    const forced = await cli(root, ['rollback', result.summary.runId, '--force']);
    expect(forced.code).toBe(0);
    expect(existsSync(userFile)).toBe(false);
  });

  it('--dry-run prints the diff and writes nothing', async () => {
    const root = workspace();
    const before = snapshotDirectory(root);
    const run = await cli(root, ['consolidate', '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/space default: dry run in [\d.]+ m?s, nothing written/);
    expect(run.stdout).toMatch(/^\+.*Lives in Porto/m);
    expect(snapshotDirectory(root)).toEqual(before);
    expect(existsSync(join(root, 'memory'))).toBe(false);

    const json = await cli(root, ['consolidate', '--dry-run', '--json']);
    const result = json.data<ConsolidateOutput>().results[0]!;
    if (!result.ok) throw new Error(result.error.message);
    expect(result.summary.status).toBe('dry-run');
    expect(result.summary.diff).toContain('MEMORY.md');
    expect(snapshotDirectory(root)).toEqual(before);
  });

  it('says why a run was skipped (gates) and exits 0', async () => {
    const root = workspace(FIRST_FOUR);
    const run = await cli(root, ['consolidate']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('space default: skipped, 4 settled new sessions; 5 needed');
    expect(run.stdout).toContain('--force');
    expect(fake.server.requests).toHaveLength(0);
    const jsonRun = await cli(root, ['consolidate', '--json']);
    expect(jsonRun.json()).toMatchObject({ ok: true });
    const json = jsonRun.data<ConsolidateOutput>();
    expect(json.results[0]).toMatchObject({ ok: true, summary: { status: 'skipped' } });
  });

  it('names a sessions directory that does not exist, with the fix, exits 1 and makes no folder', async () => {
    const root = workspace();
    rmSync(join(root, 'sessions'), { recursive: true });
    rmSync(join(root, 'memory'), { recursive: true, force: true });
    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(1);
    const sessions = join(root, 'sessions');
    expect(run.stdout).toContain(
      `space default: failed, sessions directory ${sessions} does not exist; create it (mkdir -p ${sessions})`,
    );
    expect(run.stdout).not.toContain('no new messages');
    expect(existsSync(join(root, 'memory'))).toBe(false);
    const json = await cli(root, ['consolidate', '--force', '--json']);
    expect(json.data<ConsolidateOutput>().results[0]).toMatchObject({
      ok: false,
      error: { name: 'ConfigError' },
    });
    expect(fake.server.requests).toHaveLength(0);
  });

  it('reports a busy space with the lock holder and exits 1', async () => {
    const root = workspace();
    const lock = await acquireLock(join(root, 'memory'), { owner: 'worker 7', staleMs: 60_000 });
    try {
      const run = await cli(root, ['consolidate']);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/space default: busy, default is locked by worker 7 \(pid \d+ on .+\)/);
      const json = await cli(root, ['consolidate', '--json']);
      expect(json.code).toBe(1);
      const result = json.data<ConsolidateOutput>().results[0]!;
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({
        name: 'LockBusyError',
        holder: { owner: 'worker 7', pid: process.pid },
      });
      expect(fake.server.requests).toHaveLength(0);
    } finally {
      await lock.release();
    }
  });

  it('fails before any work with ANTHROPIC_API_KEY named when there is no key, exit 2 as every setup error', async () => {
    const root = workspace();
    const run = await runCliCaptured(['consolidate'], { cwd: root });
    expect(run.code).toBe(2); // a setup to fix, as a ConfigError
    expect(run.stderr).toContain('ANTHROPIC_API_KEY');
    expect(existsSync(join(root, 'memory'))).toBe(false);
    const json = await runCliCaptured(['consolidate', '--json'], { cwd: root });
    expect(json.code).toBe(2);
    expect(json.json<{ ok: boolean; error: { name: string } }>()).toMatchObject({
      ok: false,
      error: { name: 'ModelError' },
    });
  });

  it('runs every space in turn when none is named; a busy one fails the command, the next still runs', async () => {
    const root = workspace();
    cpSync(join(root, 'sessions'), join(root, 'other-sessions'), { recursive: true });
    writeFileSync(
      join(root, 'dreamd.config.json'),
      JSON.stringify({
        spaces: [
          { id: 'first', sessions: './sessions', memory: './memory' },
          { id: 'second', sessions: './other-sessions', memory: './other-memory' },
        ],
      }),
    );
    const lock = await acquireLock(join(root, 'memory'), { owner: 'worker 7', staleMs: 60_000 });
    let run: CliRun;
    try {
      run = await cli(root, ['consolidate', '--json']);
    } finally {
      await lock.release();
    }
    expect(run.code).toBe(1);
    expect(run.json()).toMatchObject({ ok: false, command: 'consolidate' });
    const output = run.data<ConsolidateOutput>();
    expect(output.results.map((result) => [result.spaceId, result.ok])).toEqual([
      ['first', false],
      ['second', true],
    ]);
    expect(existsSync(join(root, 'other-memory', 'MEMORY.md'))).toBe(true);
    expect(existsSync(join(root, 'memory', 'MEMORY.md'))).toBe(false);
  });

  it('reports a model failure, writes nothing and exits 1', async () => {
    const root = workspace();
    fake.server.setDefault(faults.serverError());
    const run = await cli(root, ['consolidate']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /space default: failed, .*\n\s+nothing was written; its sessions stay pending/,
    );
    expect(memoryFiles(root).size).toBe(0);
  });

  it('exits 2 for an unknown space and 1 for an unknown run', async () => {
    const root = workspace();
    expect((await cli(root, ['consolidate', 'nope'])).code).toBe(2);
    const unknown = await cli(root, ['history', 'show', 'run-19700101T000000Z-aaaaaa']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run run-19700101T000000Z-aaaaaa in the history of space(s) default');
    expect((await cli(root, ['rollback', 'run-19700101T000000Z-aaaaaa'])).code).toBe(1);
    expect((await cli(root, ['history', '--limit', 'lots'])).code).toBe(2);
  });
});
