import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionRow } from '../../src/cli/session-list.js';
import type { SpaceStatus } from '../../src/cli/space-status.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { snapshotDirectory } from '../support/space.js';
import { cliAt, exampleWorkspace, useFakeAnthropic } from '../support/fixtures.js';
import type { CliRun } from '../support/cli.js';

/**
 * Keeping a session out of memory, on the path a person runs: `dreamd sessions exclude`, the marker typed in
 * the session, and `keepOut.externalContext`. Each kept-out session's fact never reaches a memory file nor a
 * model request; a neighbour's does; the session is neither an error nor waiting (exit 0), and `sessions list`
 * and `status` say it is kept out and why.
 */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

const COFFEE = '2026-11-09-coffee-usual.json';
const DINNER = '2026-11-05-dinner-friday.json';
const SEMICOLONS = '2026-11-12-no-semicolons.json';
const POSTGRES = '2026-11-16-postgres-migration.json';

function cli(root: string, argv: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return cliAt(root, fake.url, argv, env);
}

/** Every memory file's text (dreamd's state under .dreamd/ left out), joined. */
function memoryText(root: string): string {
  const files = snapshotDirectory(join(root, 'memory'));
  return [...files.entries()]
    .filter(([name]) => !name.startsWith('.dreamd'))
    .map(([, text]) => text)
    .join('\n');
}

/** Everything the model was sent. */
function sentToModel(): string {
  return [
    ...fake.server.requests.map((request) => JSON.stringify(request.body)),
    ...fake.server.batches.map((batch) => JSON.stringify(batch)),
  ].join('\n');
}

/** Appends messages to an example session (native format) in the workspace. */
function appendMessages(root: string, file: string, messages: readonly unknown[]): void {
  const path = join(root, 'sessions', file);
  const session = JSON.parse(readFileSync(path, 'utf8')) as { messages: unknown[] };
  session.messages.push(...messages);
  writeFileSync(path, JSON.stringify(session, null, 2));
}

function rowOf(rows: readonly SessionRow[], file: string): SessionRow {
  const row = rows.find((candidate) => candidate.file === file);
  if (row === undefined) throw new Error(`no row for ${file}`);
  return row;
}

describe('dreamd sessions exclude and include', () => {
  it('keeps an excluded session out of every run until it is included again', async () => {
    const root = exampleWorkspace([COFFEE, DINNER], 'keep-out');
    const excluded = await cli(root, ['sessions', 'exclude', COFFEE, '--json']);
    expect(excluded.stderr).toBe('');
    expect(excluded.code).toBe(0);
    expect(excluded.data()).toMatchObject({
      space: 'default',
      file: COFFEE,
      keptOut: true,
      changed: true,
      reasons: [{ reason: 'command' }],
    });

    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/waiting/);
    expect(memoryText(root)).toContain("Doesn't eat spicy food");
    expect(memoryText(root)).not.toContain('oat flat white');
    expect(sentToModel()).not.toContain('Fábrica');

    const list = await cli(root, ['sessions', 'list', '--json']);
    expect(list.code).toBe(0);
    const rows = list.data<SessionRow[]>();
    expect(rowOf(rows, COFFEE)).toMatchObject({
      status: 'kept-out',
      keptOut: { reason: 'command', detail: expect.stringContaining('dreamd sessions exclude') },
    });
    expect(rowOf(rows, DINNER)).toMatchObject({ status: 'consolidated', keptOut: null });
    const human = await cli(root, ['sessions', 'list']);
    expect(human.stdout).toContain(`kept out ${COFFEE} (by dreamd sessions exclude)`);
    expect(human.stdout).toMatch(/1 kept out/);

    const status = await cli(root, ['status', '--json']);
    const [space] = status.data<SpaceStatus[]>();
    expect(space?.sessions).toMatchObject({ settledNew: 0, keptOut: 1 });
    expect(space?.waiting).toEqual([]);
    expect((await cli(root, ['status'])).stdout).toMatch(/1 kept out \(dreamd sessions list says why\)/);

    // A second run reads nothing: the excluded file is not new, and it is never opened.
    const requestsBefore = fake.server.requests.length;
    expect((await cli(root, ['consolidate', '--force'])).code).toBe(0);
    expect(fake.server.requests.length).toBe(requestsBefore);

    const included = await cli(root, ['sessions', 'include', '2026-11-09-coffee-usual', '--json']);
    expect(included.code).toBe(0);
    expect(included.data()).toMatchObject({ keptOut: false, changed: true, reasons: [] });
    expect((await cli(root, ['consolidate', '--force'])).code).toBe(0);
    expect(memoryText(root)).toContain('oat flat white');
  });

  it('names the fix when no session answers to the name', async () => {
    const root = exampleWorkspace([COFFEE], 'keep-out');
    const run = await cli(root, ['sessions', 'exclude', 'no-such-session']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no session "no-such-session" in space default');
    expect(run.stderr).toContain('dreamd sessions list');
  });
});

describe('#dreamd:ignore typed in a session', () => {
  it("keeps the whole session out, and only the person's own line counts", async () => {
    const root = exampleWorkspace([COFFEE, DINNER, SEMICOLONS], 'keep-out');
    // The person's line, after the fact the session teaches: the session is judged whole.
    appendMessages(root, DINNER, [{ role: 'user', content: 'Thanks.\n  #dreamd:ignore  ' }]);
    // Neither an assistant's text nor a tool's result can keep a session out.
    appendMessages(root, COFFEE, [{ role: 'assistant', content: '#dreamd:ignore' }]);
    appendMessages(root, SEMICOLONS, [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_x', name: 'read_file', input: {} }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: '#dreamd:ignore' }],
      },
    ]);

    const run = await cli(root, ['consolidate', '--force', '--json']);
    expect(run.code).toBe(0);
    const text = memoryText(root);
    expect(text).not.toContain('spicy');
    expect(text).toContain('oat flat white');
    expect(text).toContain('No semicolons in TypeScript');
    expect(sentToModel()).not.toContain("don't eat spicy food");

    const rows = (await cli(root, ['sessions', 'list', '--json'])).data<SessionRow[]>();
    expect(rowOf(rows, DINNER)).toMatchObject({
      status: 'kept-out',
      keptOut: { reason: 'marker', detail: expect.stringContaining('#dreamd:ignore') },
    });
    expect(rowOf(rows, COFFEE).status).toBe('consolidated');
    expect(rowOf(rows, SEMICOLONS).status).toBe('consolidated');

    // `include` takes off only a person's command mark: the marker in the session still keeps it out.
    const included = await cli(root, ['sessions', 'include', DINNER, '--json']);
    expect(included.data()).toMatchObject({ keptOut: true, changed: false, reasons: [{ reason: 'marker' }] });
  });
});

describe('batch mode', () => {
  it('sends no kept-out session in a message batch, and commits the others', async () => {
    const root = exampleWorkspace([COFFEE, DINNER, SEMICOLONS], 'keep-out');
    appendMessages(root, DINNER, [{ role: 'user', content: '#dreamd:ignore' }]);
    expect((await cli(root, ['sessions', 'exclude', COFFEE])).code).toBe(0);
    const run = await cli(root, ['consolidate', '--batch', '--force'], { DREAMD_BATCH_POLL_SECONDS: '0.01' });
    expect(run.code).toBe(0);
    expect(fake.server.batches).toHaveLength(1);
    const sent = sentToModel();
    expect(sent).toContain('semicolons');
    expect(sent).not.toContain('Fábrica');
    expect(sent).not.toContain("don't eat spicy food");
    const text = memoryText(root);
    expect(text).toContain('No semicolons in TypeScript');
    expect(text).not.toContain('oat flat white');
    expect(text).not.toContain('spicy');
  });
});

describe('keepOut.externalContext', () => {
  /** Dinner uses a web tool, Postgres an MCP tool; coffee uses neither. */
  function externalWorkspace(externalContext: boolean | undefined): string {
    const root = exampleWorkspace([COFFEE, DINNER, POSTGRES], 'keep-out');
    appendMessages(root, DINNER, [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_w', name: 'WebFetch', input: { url: 'https://example.com' } },
        ],
      },
    ]);
    appendMessages(root, POSTGRES, [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_m', name: 'mcp__linear__get_issue', input: { id: 'SHOP-1' } },
        ],
      },
    ]);
    writeFileSync(
      join(root, 'dreamd.config.json'),
      JSON.stringify({
        spaces: [{ id: 'default', sessions: './sessions', memory: './memory' }],
        ...(externalContext === undefined ? {} : { keepOut: { externalContext } }),
      }),
    );
    return root;
  }

  it('keeps out the sessions that used a web or MCP tool when on', async () => {
    const root = externalWorkspace(true);
    const run = await cli(root, ['consolidate', '--force']);
    expect(run.code).toBe(0);
    const text = memoryText(root);
    expect(text).toContain('oat flat white');
    expect(text).not.toContain('spicy');
    expect(text).not.toContain('Postgres');
    const rows = (await cli(root, ['sessions', 'list', '--json'])).data<SessionRow[]>();
    expect(rowOf(rows, DINNER).keptOut).toEqual({
      reason: 'external-context',
      detail: expect.stringContaining('WebFetch'),
    });
    expect(rowOf(rows, POSTGRES).keptOut).toEqual({
      reason: 'external-context',
      detail: expect.stringContaining('mcp__linear__get_issue'),
    });
    const [space] = (await cli(root, ['status', '--json'])).data<SpaceStatus[]>();
    expect(space?.sessions.keptOut).toBe(2);
  });

  it('learns from them by default', async () => {
    const root = externalWorkspace(undefined);
    expect((await cli(root, ['consolidate', '--force'])).code).toBe(0);
    const text = memoryText(root);
    expect(text).toContain("Doesn't eat spicy food");
    expect(text).toContain('Postgres');
  });
});
