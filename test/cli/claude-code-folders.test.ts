/**
 * Claude Code's own memory folders, both vintages (test/fixtures/claude-code-memory), read through the real
 * CLI: every line and file someone else wrote is memory, found by search, shown to the model, never changed.
 */
import { copyFileSync, cpSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecallResult } from '../../src/agent/recall.js';
import { BLOCK_BEGIN } from '../../src/memory/index-block.js';
import type { Fact } from '../../src/memory/types.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import type { CliRun } from '../support/cli.js';
import { snapshotDirectory, EXAMPLE_SESSIONS_DIR } from '../support/space.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/claude-code-memory/', import.meta.url));

/** The facts the older folder keeps only as lines of MEMORY.md: two paragraph lines and six bullets. */
const OLDER_LINE_FACTS = [
  'Shipping-schedule dashboard. Go 1.23 backend, SQLite, htmx frontend served from `web/`.',
  'Plan: move the scheduler to a separate worker binary (#41).',
  'Run locally: `make dev` (starts the server on port 8640 with `HARBOR_AUTH=off`)',
  'Logs go to `/var/tmp/harbor.log`',
  'The seed data lives in `testdata/ports.csv`; regenerate with `make seed`',
  'The tide API rate-limits at 60 requests a minute; the client in `tides/client.go` backs off on 429',
  "Timestamps in the database are UTC; the UI converts with the port's own zone from `ports.tz`",
  '`go test ./...` needs `CGO_ENABLED=1` because of the SQLite driver',
];

const fake = useFakeAnthropic();
const temp = useTempDir('claude-code-folder');
let root: string;
let memoryDir: string;

function cli(argv: readonly string[]): Promise<CliRun> {
  return cliAt(root, fake.url, argv);
}

async function search(query: string): Promise<RecallResult[]> {
  const run = await cli(['memory', 'search', query, '--json']);
  expect(run.code).toBe(0);
  return run.data<{ results: RecallResult[] }>().results;
}

async function shownFacts(): Promise<Fact[]> {
  return (await cli(['memory', 'show', '--json'])).data<{ facts: Fact[] }>().facts;
}

beforeEach(async () => {
  root = temp.path;
  memoryDir = join(root, 'memory');
  cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), { recursive: true });
});

describe('the older Claude Code folder (facts as MEMORY.md lines, loose frontmatter)', () => {
  beforeEach(() => {
    cpSync(join(FIXTURES, 'older'), memoryDir, { recursive: true });
  });

  it('finds with memory search the facts that live only as lines and bullets of MEMORY.md', async () => {
    const bullet = (await search('tide API rate limits'))[0];
    expect(bullet?.text).toContain(OLDER_LINE_FACTS[5]);
    const line = (await search('scheduler worker binary'))[0];
    expect(line?.text).toContain(OLDER_LINE_FACTS[1]);
    const facts = await shownFacts();
    const fromLines = facts.filter((fact) => fact.file === 'MEMORY.md');
    expect(fromLines.map((fact) => fact.body).sort()).toEqual([...OLDER_LINE_FACTS].sort());
    expect(fromLines.every((fact) => fact.owner === 'other')).toBe(true);
    // The index lines under "Links" point at files read on their own: those files are the facts, not the lines.
    expect(facts.filter((fact) => fact.title === 'Testing approach')).toHaveLength(1);
    expect(fromLines.find((fact) => fact.body === OLDER_LINE_FACTS[3])).toMatchObject({
      description: 'MEMORY.md, under "Dev setup"',
    });
  });

  it('refuses to forget a line of MEMORY.md: its writer edits it', async () => {
    const before = snapshotDirectory(memoryDir);
    const line = (await shownFacts()).find((fact) => fact.body === OLDER_LINE_FACTS[3]);
    const forget = await cli(['memory', 'forget', line?.id ?? '']);
    expect(forget.code).toBe(1);
    expect(forget.stderr).toMatch(
      /is a line of MEMORY\.md .* outside dreamd's block .*Edit or delete that line yourself/,
    );
    expect(snapshotDirectory(memoryDir)).toEqual(before);
  });

  it('shows them to the model and keeps their bytes, and lists a contradicted line for review', async () => {
    // Written in October, before the sessions: a session's newer word on the logs contradicts a line.
    utimesSync(join(memoryDir, 'MEMORY.md'), new Date('2026-10-01'), new Date('2026-10-01'));
    const before = snapshotDirectory(memoryDir);
    fake.server.setDefault(
      scriptedExtractor([
        {
          trigger: 'I live in Lisbon',
          type: 'project',
          title: 'Logs go to journald',
          body: 'The server logs to journald now, not to a file.',
          replacesTitle: 'Logs go to `/var/tmp/harbor.log`',
        },
      ]),
    );
    const run = await cli(['consolidate', '--force']);
    expect(run.code).toBe(0);
    const sent = fake.server.requests.map((request) => `${request.system}\n${request.prompt}`).join('\n');
    for (const text of OLDER_LINE_FACTS) expect(sent).toContain(text);
    // Every byte of Claude Code's files is as it was; MEMORY.md only gained dreamd's block after its last byte.
    const after = snapshotDirectory(memoryDir);
    for (const [file, bytes] of before) {
      if (file === 'MEMORY.md') expect(after.get(file)?.startsWith(bytes)).toBe(true);
      else expect(after.get(file)).toBe(bytes);
    }
    const index = after.get('MEMORY.md') ?? '';
    const block = index.slice(index.indexOf(BLOCK_BEGIN));
    // The lines are in the file already: dreamd's block does not list them a second time.
    for (const text of OLDER_LINE_FACTS) expect(block).not.toContain(text);
    const review = readFileSync(join(memoryDir, '.dreamd', 'review.md'), 'utf8');
    expect(review).toContain('## MEMORY.md');
    expect(review).toContain('Logs go to `/var/tmp/harbor.log`');
    expect(review).toContain('Logs go to journald');
  });

  it('keeps the type, title and whole description of the file whose frontmatter is not strict YAML', async () => {
    const show = await cli(['memory', 'show', '--json']);
    expect(show.data<{ problems: unknown[] }>().problems).toEqual([]);
    // The same file under a name that says nothing: type and title can only come from its frontmatter.
    copyFileSync(join(memoryDir, 'reference_vessel_codes.md'), join(memoryDir, 'imo.md'));
    const facts = await shownFacts();
    for (const file of ['reference_vessel_codes.md', 'imo.md']) {
      const fact = facts.find((candidate) => candidate.file === file);
      expect(fact).toMatchObject({
        type: 'reference',
        title: 'Vessel codes',
        description: 'Where vessel codes come from: the IMO list, mirrored weekly # see ops wiki',
        body: 'Vessel codes come from the IMO registry export, mirrored weekly into `data/imo.csv` by the `sync-imo` job.',
      });
    }
  });
});

describe('the current Claude Code folder', () => {
  it('reads each file once, no index line as a fact, and a README as no fact at all', async () => {
    cpSync(join(FIXTURES, 'current'), memoryDir, { recursive: true });
    writeFileSync(
      join(memoryDir, 'README.md'),
      '# memory/\n\nThis folder holds the memory of the project.\n',
    );
    const facts = await shownFacts();
    expect(facts.map((fact) => [fact.file, fact.type, fact.title]).sort()).toEqual([
      ['feedback_real_db_tests.md', 'feedback', 'Run tests with the real database'],
      ['project_release_branch.md', 'project', 'Release branch deploys'],
      ['user_terse_answers.md', 'user', 'Prefers terse answers'],
    ]);
    expect(await search('folder holds the memory of the project')).toEqual([]);
  });

  it('memory show lists the files the claude-code layout wrote, one fact each, apart from the files of others', async () => {
    cpSync(join(FIXTURES, 'current'), memoryDir, { recursive: true });
    writeFileSync(
      join(root, 'dreamd.config.json'),
      JSON.stringify({
        spaces: [{ id: 'repo', sessions: 'sessions', memory: 'memory', layout: 'claude-code' }],
      }),
    );
    fake.server.setDefault(
      scriptedExtractor([
        { trigger: 'semicolons', type: 'feedback', title: 'No semicolons', body: 'No semicolons in TS.' },
      ]),
    );
    expect((await cli(['consolidate', '--force'])).code).toBe(0);
    const shown = await cli(['memory', 'show']);
    expect(shown.code).toBe(0);
    const ours = shown.stdout.slice(shown.stdout.indexOf("## dreamd's files, one fact each"));
    expect(ours).toContain('feedback_no_semicolons.md');
    expect(ours.slice(0, ours.indexOf('## files dreamd did not write'))).not.toContain(
      'user_terse_answers.md',
    );
    expect(shown.stdout.slice(shown.stdout.indexOf('## files dreamd did not write'))).toContain(
      'user_terse_answers.md',
    );
  });
});
