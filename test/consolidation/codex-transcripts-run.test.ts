import { appendFileSync, copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { SessionRow } from '../../src/cli/session-list.js';
import { loadMemory, readLedger } from '../../src/space/index.js';
import type { ScriptedFact } from '../../harness/scripted-extractor.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';
import { CODEX_FIXTURE, CODEX_FIXTURES, CODEX_HEAD_DROPPED } from '../transcripts/helpers.js';

/**
 * The public Codex rollout slices, laid out as Codex lays them out (`sessions/YYYY/MM/DD/rollout-….jsonl`),
 * consolidated by the CLI through the whole pipeline against the fake Anthropic server.
 */

const CHESS_ID = '019aad50-a7e6-7422-b7a8-0b384290624f';
const EXEC_ID = '019a2d7a-41c4-78b1-b7cc-a45d62a89cd5';
const CHESS = join('2025', '11', '22', `rollout-2025-11-22T21-45-35-${CHESS_ID}.jsonl`);
const EXEC = join('2025', '10', '29', `rollout-2025-10-29T00-59-38-${EXEC_ID}.jsonl`);
const LONG_AGO = new Date('2025-12-01T00:00:00Z');

/** What the fake model answers: a fact for each session that says one of these triggers. */
const ROLLOUT_FACTS: readonly ScriptedFact[] = [
  {
    trigger: 'pieces have a cooldown before they are allowed to move',
    type: 'project',
    title: 'Cooldown chess',
    body: 'A chess variant where each piece has a cooldown before it may move; a lichess-style clone first.',
  },
  {
    trigger: "this is a test prompt. Don't do anythin",
    type: 'feedback',
    title: 'Test prompts need no action',
    body: 'A prompt marked as a test needs no action.',
  },
];

const fake = useFakeAnthropic({ facts: ROLLOUT_FACTS });
const temp = useTempDir('codex-run');
let root: string;
let sessions: string;

interface ConsolidateOutput {
  results: ConsolidateOutcome[];
}

function place(relative: string, fixture: string): void {
  const path = join(sessions, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  copyFileSync(join(CODEX_FIXTURES, fixture), path);
  utimesSync(path, LONG_AGO, LONG_AGO);
}

async function consolidate(): Promise<Extract<ConsolidateOutcome, { ok: true }>> {
  const run = await cliAt(root, fake.url, ['consolidate', '--force', '--json']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const [result] = run.data<ConsolidateOutput>().results;
  if (result === undefined || !result.ok) throw new Error(`no completed run: ${run.stdout}`);
  return result;
}

beforeEach(() => {
  root = temp.path;
  sessions = join(root, 'codex-sessions');
  writeFileSync(
    join(root, 'dreamd.config.json'),
    JSON.stringify({
      spaces: [{ id: 'codex', sessions: './codex-sessions', memory: './memory', format: 'codex' }],
    }),
  );
  place(CHESS, CODEX_FIXTURE.head);
  place(EXEC, CODEX_FIXTURE.twoPlusTwo);
});

describe('a run over Codex rollouts', () => {
  it('lists the rollouts of the dated folders with their message counts and what each left out', async () => {
    const run = await cliAt(root, fake.url, ['sessions', 'list', '--json']);
    expect(run.code).toBe(0);
    const rows = run.data<SessionRow[]>();
    expect(rows.map((row) => [row.file, row.sessionId, row.status, row.messages])).toEqual([
      [EXEC, EXEC_ID, 'settled', 2],
      [CHESS, CHESS_ID, 'settled', 5],
    ]);
    expect(rows[1]?.dropped).toEqual(CODEX_HEAD_DROPPED);
  });

  it("sends the person's words and one line a tool call, never the injected context or the reasoning, and remembers", async () => {
    const result = await consolidate();
    expect(result.summary.status).toBe('completed');
    expect([...result.summary.sessions].sort()).toEqual([EXEC_ID, CHESS_ID].sort());
    expect(result.summary.problems).toEqual([]);
    const prompt = fake.server.requests.map((request) => request.prompt).join('\n');
    expect(prompt).toContain('pieces have a cooldown before they are allowed to move');
    expect(prompt).toContain('what is 2+2? just give me the answer');
    expect(prompt).toContain('assistant → shell_command(git status -sb)');
    expect(prompt).not.toMatch(/environment_context|Inspecting repository|gAAAAAB|ghost_commit|rate_limits/);
    const memory = await loadMemory(join(root, 'memory'));
    expect(memory.facts.map((fact) => fact.title)).toEqual(['Cooldown chess']);
    const ledger = await readLedger(join(root, 'memory'));
    expect(ledger.sessions[CHESS_ID]).toMatchObject({ file: CHESS, messageCount: 5 });
    expect(ledger.sessions[EXEC_ID]).toMatchObject({ file: EXEC, messageCount: 2 });
  });

  it('reads a rollout that grew after consolidation from where it stopped, once, and leaves the others alone', async () => {
    await consolidate();
    const requestsBefore = fake.server.requests.length;
    const path = join(sessions, CHESS);
    appendFileSync(path, readFileSync(join(CODEX_FIXTURES, CODEX_FIXTURE.tail)));
    utimesSync(path, LONG_AGO, new Date(LONG_AGO.getTime() + 60_000));

    const grown = await consolidate();
    expect(grown.summary.sessions).toEqual([CHESS_ID]);
    const newPrompts = fake.server.requests
      .slice(requestsBefore)
      .map((request) => request.prompt)
      .join('\n');
    expect(newPrompts).toContain("this is a test prompt. Don't do anythin");
    expect(newPrompts).not.toContain('pieces have a cooldown before they are allowed to move');
    expect(newPrompts).not.toContain('what is 2+2');
    const memory = await loadMemory(join(root, 'memory'));
    expect(memory.facts.map((fact) => fact.title).sort()).toEqual([
      'Cooldown chess',
      'Test prompts need no action',
    ]);
    expect((await readLedger(join(root, 'memory'))).sessions[CHESS_ID]).toMatchObject({ messageCount: 8 });

    const requestsAfter = fake.server.requests.length;
    const again = await consolidate();
    expect(again.summary.sessions).toEqual([]);
    expect(fake.server.requests.length).toBe(requestsAfter);
  });
});
