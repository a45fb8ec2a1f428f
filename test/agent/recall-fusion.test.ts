import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createRecall, createRecallTool } from '../../src/agent/recall.js';
import { fuseRankings, PASSAGE_RANK_OFFSET } from '../../src/agent/recall-fusion.js';
import { createTranscriptPassages } from '../../src/agent/transcript-passages.js';
import { estimateTokens } from '../../src/digest/estimate-tokens.js';
import { recallFact } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

const fact = recallFact('2026-11-20');
const facts = [
  fact('f-aaaaaaaaaa', 'Deploys with Docker', 'The project deploys with docker compose on a single VPS.', {
    sources: ['s-deploy'],
  }),
  fact('f-bbbbbbbbbb', 'Prefers pnpm', 'Use pnpm, never npm, for installing packages in this repository.'),
];

const temp = useTempDir('fusion');
let root: string;
let sessionsDir: string;

async function writeSession(id: string, day: string, lines: readonly [string, string][]): Promise<void> {
  const start = Date.parse(`${day}T09:00:00Z`);
  await writeFile(
    path.join(sessionsDir, `${id}.json`),
    JSON.stringify({
      id,
      startedAt: new Date(start).toISOString(),
      endedAt: new Date(start + lines.length * 60_000).toISOString(),
      messages: lines.map(([role, content], index) => ({
        role,
        ts: new Date(start + index * 60_000).toISOString(),
        content,
      })),
    }),
  );
}

function passagesOf(dir = sessionsDir) {
  return createTranscriptPassages({
    space: { id: 'test', sessionsDir: dir, memoryDir: path.join(root, 'memory'), format: 'native' },
    maxBytes: 1024 * 1024,
  });
}

beforeEach(async () => {
  root = temp.path;
  sessionsDir = path.join(root, 'sessions');
  await mkdir(sessionsDir);
  await writeSession('s-deploy', '2026-11-02', [
    ['user', 'We deploy with docker compose on one VPS.'],
    ['assistant', 'Noted, compose on the VPS.'],
  ]);
  // Never made a fact: only the transcript holds where the staging database password lives.
  await writeSession('s-vault', '2026-11-10', [
    ['user', 'The staging database password is kept in the team vault under "pg-staging".'],
    ['assistant', 'Understood, I will read it from the vault entry pg-staging.'],
  ]);
});

describe('fused recall', () => {
  it('finds a question only a transcript answers, with its session and date, and not with the facts alone', async () => {
    const question = 'where is the staging database password?';
    const factsOnly = await createRecall({ facts }).recall(question, { limit: 10 });
    expect(factsOnly).toEqual([]);

    const fused = createRecall({ facts, transcripts: passagesOf() });
    const answer = await fused.search!(question, { limit: 10 });
    expect(answer.results[0]).toMatchObject({
      kind: 'passage',
      sessionId: 's-vault',
      date: '2026-11-10',
      text: 'The staging database password is kept in the team vault under "pg-staging".',
    });
    expect(answer.note).toBeUndefined();
    // The tool says what each hit is, and the tokens are those of the text it returns.
    const printed = await createRecallTool(fused).handler({ query: question, limit: 10 });
    expect(printed).toMatch(/^\[session s-vault\] 2026-11-10 \(transcript passage, score [\d.]+\)/);
    expect(answer.tokens).toBe(estimateTokens(printed));
  });

  it('ranks facts and passages together: the fact, then a passage it was not made from', async () => {
    const fused = createRecall({ facts, transcripts: passagesOf() });
    const results = await fused.recall('how do we deploy docker compose?', { limit: 10 });
    expect(results[0]).toMatchObject({ id: 'f-aaaaaaaaaa', kind: 'fact' });
    // The message the fact was made from says it again: left out. Its answer in the same session is not.
    expect(results.map((result) => result.text)).not.toContain('We deploy with docker compose on one VPS.');
    expect(results.map((result) => result.kind)).toContain('passage');
  });

  it('marks a fact a newer one replaced as archived when a question asks about the past', async () => {
    const past = [
      fact('f-cccccccccc', 'Editor', 'The user edits code with vim.', {
        status: 'superseded',
        supersededBy: 'f-dddddddddd',
      }),
      fact('f-dddddddddd', 'Editor', 'The user edits code with helix.'),
    ];
    const results = await createRecall({ facts: past, transcripts: passagesOf() }).recall(
      'which editor did I use before?',
    );
    expect(results.map((result) => [result.id, result.kind])).toContainEqual(['f-cccccccccc', 'archived']);
  });

  it('leaves out a session the person kept out with #dreamd:ignore', async () => {
    await writeSession('s-private', '2026-11-12', [
      ['user', '#dreamd:ignore\nMy bank PIN reminder: the blue notebook in the drawer.'],
    ]);
    const results = await createRecall({ facts, transcripts: passagesOf() }).recall('blue notebook PIN');
    expect(results).toEqual([]);
  });

  it('answers from the facts with a note when the sessions folder cannot be read', async () => {
    // A file where the folder should be: it cannot be listed (ENOTDIR), whoever runs the test.
    const notAFolder = path.join(root, 'sessions.txt');
    await writeFile(notAFolder, 'not a folder');
    const answer = await createRecall({ facts, transcripts: passagesOf(notAFolder) }).search!(
      'docker deploy',
    );
    expect(answer.results.map((result) => result.id)).toEqual(['f-aaaaaaaaaa']);
    expect(answer.note).toMatch(/^Transcripts unreadable \(.+\): facts only\.$/);
    const printed = await createRecallTool(
      createRecall({ facts, transcripts: passagesOf(notAFolder) }),
    ).handler({
      query: 'docker deploy',
    });
    expect(printed).toMatch(/\(Transcripts unreadable .*facts only\.\)$/);
  });

  it('reads the passages again only when a transcript changed', async () => {
    const source = passagesOf();
    const first = await source();
    expect(await source()).toBe(first);
    await writeSession('s-new', '2026-11-15', [['user', 'The office moves to Porto in spring.']]);
    const second = await source();
    expect(second).not.toBe(first);
    expect(second.passages.map((passage) => passage.sessionId)).toContain('s-new');
  });

  it('never reads a transcript over the byte cap', async () => {
    await writeSession('s-huge', '2026-11-16', [['user', `The lighthouse key. ${'x'.repeat(4096)}`]]);
    const source = createTranscriptPassages({
      space: { id: 'test', sessionsDir, memoryDir: path.join(root, 'memory'), format: 'native' },
      maxBytes: 2048,
    });
    const index = await source();
    expect(index.passages.map((passage) => passage.sessionId)).not.toContain('s-huge');
    expect(index.skipped).toBeGreaterThanOrEqual(1);
  });
});

describe('fuseRankings', () => {
  it('puts the first facts before the first passage, then alternates the two rankings, the fact first at equal rank', () => {
    const item = (id: string) => ({ id, date: '2026-01-01', title: id });
    const facts = Array.from({ length: 6 }, (_, index) => item(`f${index + 1}`));
    const passages = Array.from({ length: 4 }, (_, index) => item(`p${index + 1}`));
    // A passage ranks PASSAGE_RANK_OFFSET places behind a fact of the same rank.
    expect(PASSAGE_RANK_OFFSET).toBe(3);
    expect(fuseRankings(facts, passages, 8).map((entry) => entry.id)).toEqual([
      'f1',
      'f2',
      'f3',
      'f4',
      'p1',
      'f5',
      'p2',
      'f6',
    ]);
    // With no fact, the passages alone, in their order.
    expect(fuseRankings([], passages, 2).map((entry) => entry.id)).toEqual(['p1', 'p2']);
  });
});
