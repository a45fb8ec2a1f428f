import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecallResult } from '../../src/agent/recall.js';
import type { Fact } from '../../src/memory/types.js';
import type { CliRun } from '../support/cli.js';
import { EXAMPLE_ACTIVE_TITLES, EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';

const EXAMPLE_SESSIONS = fileURLToPath(new URL('../../sessions/', import.meta.url));

interface ShowOutput {
  space: string;
  memoryDir: string;
  index: string | null;
  facts: Fact[];
  problems: { file: string; reason: string }[];
}

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const temp = useTempDir('cli-memory');
let root: string;

function cli(argv: readonly string[]): Promise<CliRun> {
  return cliAt(root, fake.url, argv);
}

/** Runs `dreamd <argv>` and checks that it exits with `code`; returns the run. */
async function cliExits(argv: readonly string[], code: number): Promise<CliRun> {
  const run = await cli(argv);
  expect(run.code, `dreamd ${argv.join(' ')}: ${run.stderr}`).toBe(code);
  return run;
}

async function facts(all = false): Promise<Fact[]> {
  return (await cli(['memory', 'show', '--json', ...(all ? ['--all'] : [])])).data<ShowOutput>().facts;
}

beforeEach(async () => {
  root = temp.path;
  cpSync(EXAMPLE_SESSIONS, join(root, 'sessions'), { recursive: true });
  await cliExits(['consolidate'], 0);
});

describe('dreamd memory show', () => {
  it('shows the index and the active facts by topic file; --all adds the superseded ones', async () => {
    const run = await cliExits(['memory', 'show', '--json'], 0);
    const output = run.data<ShowOutput>();
    expect(output.space).toBe('default');
    expect(output.index).toBe(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8'));
    expect(output.facts.map((fact) => fact.title).sort()).toEqual(EXAMPLE_ACTIVE_TITLES);
    const all = await facts(true);
    expect(all).toHaveLength(7);
    expect(all.find((fact) => fact.status === 'superseded')?.body).toContain('Lisbon');

    const human = await cli(['memory', 'show']);
    expect(human.stdout).toContain('# Memory index');
    expect(human.stdout).toContain('## feedback.md');
    expect(human.stdout).not.toContain('superseded by');
    expect((await cli(['memory', 'show', '--all'])).stdout).toMatch(/superseded by f-/);
  });

  it('lists with --archived the superseded facts that are in no active file, each with its successor', async () => {
    const run = await cliExits(['memory', 'show', '--archived', '--json'], 0);
    const { archived } = run.data<{
      archived: (Fact & {
        runId: string;
        reason: string;
        successor: { id: string; title: string; status: string };
        current: { id: string };
      })[];
    }>();
    const porto = (await facts()).find((fact) => fact.title === 'Home address')!;
    expect(archived).toEqual([
      expect.objectContaining({
        title: 'Home address',
        status: 'superseded',
        reason: 'superseded',
        body: expect.stringContaining('Lisbon'),
        successor: { id: porto.id, title: 'Home address', status: 'active' },
        current: { id: porto.id, title: 'Home address' },
      }),
    ]);
    const active = ['user.md', 'feedback.md', 'project.md', 'reference.md', 'MEMORY.md']
      .map((file) => {
        try {
          return readFileSync(join(root, 'memory', file), 'utf8');
        } catch {
          return '';
        }
      })
      .join('\n');
    for (const fact of archived) expect(active).not.toContain(fact.id);
    const human = await cli(['memory', 'show', '--archived']);
    expect(human.stdout).toContain('1 archived fact');
    expect(human.stdout).toContain(porto.id);
    // history says which run moved it, and how many.
    const rows = (await cli(['history', '--json'])).data<
      { runId: string; archived: number; merged: number }[]
    >();
    expect(rows[0]).toMatchObject({ runId: archived[0]!.runId, archived: 1, merged: 0 });
    const shown = await cli(['history', 'show', archived[0]!.runId]);
    expect(shown.stdout).toMatch(/archived {3}1 fact left the active files for \.dreamd\/archive\.json/);
    // An archived fact can be forgotten too: it leaves the archive, and a rollback brings it back.
    const forgot = await cliExits(['memory', 'forget', archived[0]!.id, '--json'], 0);
    expect(
      (await cli(['memory', 'show', '--archived', '--json'])).data<{ archived: unknown[] }>().archived,
    ).toEqual([]);
    const forgetRun = forgot.data<{ runId: string }>().runId;
    await cliExits(['rollback', forgetRun], 0);
    // --fact shows an archived fact in full too.
    const one = await cliExits(['memory', 'show', '--fact', archived[0]!.id], 0);
    expect(one.stdout).toContain('Lisbon');
  });

  it('exits 1 with the problem status reports wherever the archive is read, when it is corrupt', async () => {
    const archived = (await cliExits(['memory', 'show', '--archived', '--json'], 0)).data<{
      archived: Fact[];
    }>().archived;
    writeFileSync(join(root, 'memory', '.dreamd', 'archive.json'), '{"version": 1, "entries": [');
    const [space] = (await cli(['status', '--json'])).data<
      { memory: { file: string; reason: string }[] }[]
    >();
    const problem = space!.memory.find((entry) => entry.file === '.dreamd/archive.json')?.reason;
    expect(problem).toMatch(/^\.dreamd\/archive\.json: unreadable \(.*\); .*move it away\.$/);
    for (const argv of [
      ['memory', 'show', '--archived'],
      ['memory', 'show', '--all'],
      ['memory', 'show', '--fact', archived[0]!.id],
      ['memory', 'search', 'Lisbon', '--archived'],
      ['memory', 'forget', archived[0]!.id],
    ]) {
      const run = await cliExits(argv, 1);
      expect(run.stderr, argv.join(' ')).toContain(problem);
      expect(run.stdout, argv.join(' ')).not.toMatch(/the archive is empty/);
    }
    const json = await cliExits(['memory', 'show', '--archived', '--json'], 1);
    expect(json.json()).toMatchObject({ ok: false, error: { name: 'ArchiveUnreadableError' } });
    // What does not read the archive still works.
    await cliExits(['memory', 'show'], 0);
    // A file that cannot be read at all is unreadable too, not taken for no archive (a run would write over it).
    rmSync(join(root, 'memory', '.dreamd', 'archive.json'));
    mkdirSync(join(root, 'memory', '.dreamd', 'archive.json'));
    const folder = await cliExits(['memory', 'show', '--archived'], 1);
    expect(folder.stderr).toMatch(/\.dreamd\/archive\.json: unreadable \(EISDIR/);
  });

  it('shows one fact in full with --fact, and exits 1 for an unknown id', async () => {
    const rule = (await facts()).find((fact) => fact.type === 'feedback')!;
    const json = await cliExits(['memory', 'show', '--fact', rule.id, '--json'], 0);
    expect(json.data<{ fact: Fact }>().fact).toMatchObject({
      id: rule.id,
      title: 'No semicolons in TypeScript',
    });
    const human = await cli(['memory', 'show', '--fact', rule.id]);
    expect(human.stdout).toContain('Why: Prettier runs with semi: false');
    expect(human.stdout).toContain('How to apply: Write TS without semicolons.');

    const unknown = await cliExits(['memory', 'show', '--fact', 'f-0000000000'], 1);
    expect(unknown.stderr).toContain('no fact f-0000000000');
  });

  it('exits 2 for an unknown space', async () => {
    const run = await cliExits(['memory', 'show', 'nope'], 2);
    expect(run.stderr).toContain('no space "nope"');
  });
});

describe('dreamd memory search', () => {
  it('ranks the matching active facts first', async () => {
    const run = await cliExits(['memory', 'search', 'coffee order', '--json'], 0);
    const output = run.data<{ query: string; results: RecallResult[] }>();
    expect(output.query).toBe('coffee order');
    expect(output.results[0]?.title).toBe('Usual coffee order');
    expect(output.results.every((result) => result.score > 0)).toBe(true);

    // Fused: the active fact first, then the message of the transcript that said where the user lived.
    const address = (await cli(['memory', 'search', 'lives', '--json'])).data<{
      results: RecallResult[];
      tokens: number;
    }>();
    expect(address.results.map((result) => [result.kind, result.text.slice(0, 40)])).toEqual([
      ['fact', 'Lives in Porto since 2026-11-19.'],
      ['passage', 'Hi! Can you order the replacement filter'],
    ]);
    expect(address.results[1]?.sessionId).toMatch(/\S/);
    expect(address.tokens).toBeGreaterThan(0);
    const factsOnly = (await cli(['memory', 'search', 'lives', '--no-transcripts', '--json'])).data<{
      results: RecallResult[];
    }>();
    expect(factsOnly.results.map((result) => result.text)).toEqual(['Lives in Porto since 2026-11-19.']);
  });

  it('finds an archived fact with --archived, and for a question about the past', async () => {
    const archived = await cliExits(['memory', 'search', 'lives', '--archived', '--json'], 0);
    const texts = archived.data<{ results: RecallResult[] }>().results.map((result) => result.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        'Lives in Porto since 2026-11-19.',
        expect.stringMatching(
          /^Lives in Lisbon, Rua das Flores 28\.\n\(Previously, before .*; replaced by f-/,
        ),
      ]),
    );
    const past = await cli(['memory', 'search', 'where did I live before', '--json']);
    expect(past.data<{ results: RecallResult[] }>().results.map((result) => result.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/Lisbon/)]),
    );
  });

  it('says so when nothing matches, and exits 0', async () => {
    const run = await cliExits(['memory', 'search', 'kubernetes'], 0);
    expect(run.stdout).toContain('nothing in the memory of space default matches "kubernetes"');
  });
});

describe('dreamd memory forget', () => {
  it('removes the fact from its topic file and MEMORY.md, as a run that can be rolled back', async () => {
    const coffee = (await facts()).find((fact) => fact.title === 'Usual coffee order')!;
    const indexBefore = readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8');
    expect(indexBefore).toContain(coffee.id);

    const run = await cliExits(['memory', 'forget', coffee.id, '--json'], 0);
    const output = run.data<{ forgotten: { id: string; title: string }; runId: string }>();
    expect(output.forgotten).toMatchObject({ id: coffee.id, title: 'Usual coffee order' });
    expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).not.toContain(coffee.id);
    expect(readFileSync(join(root, 'memory', 'user.md'), 'utf8')).not.toContain('oat flat white');
    await cliExits(['memory', 'show', '--fact', coffee.id], 1);

    const history = (await cli(['history', '--json'])).data<{ kind: string; runId: string }[]>();
    expect(history[0]).toMatchObject({ kind: 'forget', runId: output.runId });
    await cliExits(['rollback', output.runId], 0);
    expect(readFileSync(join(root, 'memory', 'MEMORY.md'), 'utf8')).toBe(indexBefore);
  });

  it('exits 1 with a clear message for an unknown id', async () => {
    const run = await cliExits(['memory', 'forget', 'f-0000000000'], 1);
    expect(run.stderr).toMatch(/no fact f-0000000000 in .*memory; `dreamd memory show` lists the ids/);
    const json = await cli(['memory', 'forget', 'f-0000000000', '--json']);
    expect(json.json()).toMatchObject({ ok: false, error: { name: 'FactNotFoundError' } });
  });
});

describe('dreamd memory on files dreamd did not write', () => {
  it('shows and finds a Claude Code memory in the folder, and refuses to forget it', async () => {
    const note =
      '---\nname: Deploy window\ndescription: Deploys only on Tuesdays\nmetadata:\n  type: project\n---\n\nProduction deploys happen only on Tuesdays.\n';
    writeFileSync(join(root, 'memory', 'project_deploys.md'), note);
    const show = (await cli(['memory', 'show', '--json'])).data<ShowOutput>();
    const mine = show.facts.find((fact) => fact.file === 'project_deploys.md');
    expect(mine).toMatchObject({ title: 'Deploy window', type: 'project', owner: 'other' });
    const text = await cli(['memory', 'show']);
    expect(text.stdout).toContain('files dreamd did not write');
    const search = (await cli(['memory', 'search', 'Tuesdays deploys', '--json'])).data<{
      results: RecallResult[];
    }>();
    expect(search.results[0]?.id).toBe(mine?.id);
    const forget = await cliExits(['memory', 'forget', mine?.id ?? ''], 1);
    expect(forget.stderr).toContain('project_deploys.md');
    expect(forget.stderr).toContain('dreamd did not write');
    expect(readFileSync(join(root, 'memory', 'project_deploys.md'), 'utf8')).toBe(note);
  });
});
