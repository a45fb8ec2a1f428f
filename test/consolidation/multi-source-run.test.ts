import { mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsolidateOutcome } from '../../src/cli/consolidate-in-process.js';
import type { SessionRow } from '../../src/cli/session-list.js';
import { loadMemory, readLedger } from '../../src/space/index.js';
import { scriptedExtractor, type ScriptedFact } from '../../harness/scripted-extractor.js';
import { cliAt, useFakeAnthropic, useTempDir } from '../support/fixtures.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import { makeRepository, placeClaudeSession, placeCodexRollout } from '../discovery/agent-home.js';
import { claudeProjectName } from '../../src/discovery/index.js';

/**
 * A hand-written space of two sources: a Claude Code project folder, and Codex's shared sessions folder kept to
 * one repository by `cwd`. One run, one ledger, one fact set; the other repository's rollouts stay out.
 */

/** What the fake model answers: a fact for each session that says one of these triggers. */
const SOURCE_FACTS: readonly ScriptedFact[] = [
  {
    trigger: 'Write a shell script called hello.sh',
    type: 'project',
    title: 'Hello script',
    body: 'hello.sh prints Hello world.',
  },
  {
    trigger: 'pieces have a cooldown before they are allowed to move',
    type: 'project',
    title: 'Cooldown chess',
    body: 'Each piece has a cooldown.',
  },
  {
    trigger: 'what is 2+2? just give me the answer',
    type: 'feedback',
    title: 'Short answers',
    body: 'Just the answer.',
  },
];

const fake = useFakeAnthropic({ facts: SOURCE_FACTS });
const temp = useTempDir('multi-source');
let root: string;
let shop: string;
let claudeFolder: string;

const CHESS = 'rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl';
const EXEC = 'rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl';

beforeEach(() => {
  root = realpathSync(temp.path);
  shop = makeRepository(join(root, 'code', 'shop'));
  const blog = makeRepository(join(root, 'code', 'blog'));
  mkdirSync(join(shop, 'server'));
  placeClaudeSession(join(root, 'claude'), shop, FIXTURE.helloWorld);
  claudeFolder = join(root, 'claude', 'projects', claudeProjectName(shop));
  placeCodexRollout(join(root, 'codex'), join(shop, 'server'), CODEX_FIXTURE.head, '2025/11/22', CHESS);
  placeCodexRollout(join(root, 'codex'), blog, CODEX_FIXTURE.twoPlusTwo, '2025/10/29', EXEC);
  writeFileSync(
    join(root, 'dreamd.config.json'),
    JSON.stringify({
      spaces: [
        {
          id: 'shop',
          memory: './shop-memory',
          sources: [
            { format: 'claude-code', path: claudeFolder },
            { format: 'codex', path: './codex/sessions', cwd: './code/shop' },
          ],
        },
      ],
    }),
  );
});

describe('a space of several sources', () => {
  it("lists both sources' sessions by absolute path, the other repository's rollout left out", async () => {
    const run = await cliAt(root, fake.url, ['sessions', 'list', '--json']);
    expect(run.code).toBe(0);
    const rows = run.data<SessionRow[]>();
    expect(rows.map((row) => [row.file, row.status, row.messages])).toEqual(
      [
        [join(claudeFolder, 'de3b8b19-5bc0-4a2a-934a-1b6806567e25.jsonl'), 'settled', expect.any(Number)],
        [join(root, 'codex', 'sessions', '2025', '11', '22', CHESS), 'settled', 5],
      ].sort((left, right) => String(left[0]).localeCompare(String(right[0]))),
    );
  });

  it('consolidates both agents into one ledger and one fact set, once', async () => {
    const run = await cliAt(root, fake.url, ['consolidate', '--force', '--json']);
    expect(run.code).toBe(0);
    const [result] = run.data<{ results: ConsolidateOutcome[] }>().results;
    expect(result?.ok && result.summary.status).toBe('completed');
    const memory = await loadMemory(join(root, 'shop-memory'));
    expect(memory.facts.map((fact) => fact.title).sort()).toEqual(['Cooldown chess', 'Hello script']);
    const ledger = await readLedger(join(root, 'shop-memory'));
    expect(
      Object.values(ledger.sessions)
        .map((entry) => entry.file)
        .sort(),
    ).toEqual(
      [
        join(claudeFolder, 'de3b8b19-5bc0-4a2a-934a-1b6806567e25.jsonl'),
        join(root, 'codex', 'sessions', '2025', '11', '22', CHESS),
      ].sort(),
    );
    const requests = fake.server.requests.length;
    const again = await cliAt(root, fake.url, ['consolidate', '--force', '--json']);
    expect(again.code).toBe(0);
    expect(fake.server.requests.length).toBe(requests);
  });

  it('merges a fact said to Claude Code and later to Codex into one fact with both sessions as its sources', async () => {
    const chess = join(root, 'codex', 'sessions', '2025', '11', '22', CHESS);
    const held = `${chess}.later`;
    renameSync(chess, held);
    const same = {
      trigger: /hello\.sh|cooldown before they are allowed/,
      type: 'project' as const,
      title: 'Tests run before every commit',
      body: 'The shop repository runs its tests before every commit.',
    };
    fake.server.setDefault(scriptedExtractor([same]));
    expect((await cliAt(root, fake.url, ['consolidate', '--force', '--json'])).code).toBe(0);
    renameSync(held, chess);
    expect((await cliAt(root, fake.url, ['consolidate', '--force', '--json'])).code).toBe(0);
    const memory = await loadMemory(join(root, 'shop-memory'));
    const facts = memory.facts.filter((fact) => fact.status === 'active');
    expect(facts.map((fact) => fact.title)).toEqual(['Tests run before every commit']);
    expect([...(facts[0]?.sources ?? [])].sort()).toEqual(
      ['019aad50-a7e6-7422-b7a8-0b384290624f', 'de3b8b19-5bc0-4a2a-934a-1b6806567e25'].sort(),
    );
  });
});
