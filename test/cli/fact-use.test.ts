/**
 * Memory that knows it is used, through the real CLI: a session whose agent read memory files is consolidated,
 * and `memory show --json` reports each fact's reads; the index lists the read fact of a type first.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, expect, it } from 'vitest';
import type { Fact } from '../../src/memory/types.js';
import { runCliCaptured } from '../support/cli.js';
import { createTestSpace, type TestSpace } from '../support/space.js';
import { modelEnv, useFakeAnthropic } from '../support/fixtures.js';

const CURRENT = fileURLToPath(new URL('../fixtures/claude-code-memory/current/', import.meta.url));

const fake = useFakeAnthropic({ answer: { json: { facts: [] } } });
let test: TestSpace;
beforeEach(async () => {
  test = createTestSpace({ modelUrl: fake.url });
  mkdirSync(test.space.memoryDir, { recursive: true });
  cpSync(CURRENT, test.space.memoryDir, { recursive: true });
});

const env = () => modelEnv(fake.url);

it('reports per-fact reads from the transcripts in memory show --json, and keeps them once across runs', async () => {
  const read = join(test.space.memoryDir, 'feedback_real_db_tests.md');
  writeFileSync(
    join(test.space.sessionsDir, 'reads-memory.json'),
    JSON.stringify({
      id: 'reads-memory',
      startedAt: '2026-11-28T09:00:00Z',
      endedAt: '2026-11-28T09:05:00Z',
      messages: [
        { role: 'user', ts: '2026-11-28T09:00:00Z', content: 'Add a test for the invoice export.' },
        {
          role: 'assistant',
          ts: '2026-11-28T09:00:04Z',
          content: [
            { type: 'text', text: 'Checking what I know about tests here.' },
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: read } },
          ],
        },
        {
          role: 'user',
          ts: '2026-11-28T09:00:05Z',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: readFileSync(read, 'utf8') }],
        },
        { role: 'assistant', ts: '2026-11-28T09:01:00Z', content: 'Done, against the real database.' },
      ],
    }),
  );
  const run = await runCliCaptured(['consolidate', '--force', '--in-process', '--json'], {
    cwd: test.root,
    env: env(),
  });
  expect(run.code).toBe(0);
  // The run record says how many active facts are read and how many never were.
  expect(JSON.stringify(run.json())).toMatch(/"factsRead":\{"used":1,"neverUsed":\d+\}/);

  const show = async () =>
    (await runCliCaptured(['memory', 'show', '--json'], { cwd: test.root, env: env() })).data<{
      facts: (Fact & { use: { reads: number; lastRead: string } | null })[];
      use: { used: number; neverUsed: number };
    }>();
  const shown = await show();
  const used = shown.facts.filter((fact) => fact.use !== null);
  expect(used.map((fact) => [fact.file, fact.use])).toEqual([
    ['feedback_real_db_tests.md', { reads: 1, lastRead: '2026-11-28' }],
  ]);
  expect(shown.use).toEqual({ used: 1, neverUsed: shown.facts.length - 1 });

  // Lost state is rebuilt from the transcripts already consolidated, by the next run.
  rmSync(join(test.space.memoryDir, '.dreamd', 'fact-use.json'));
  expect((await show()).facts.every((fact) => fact.use === null)).toBe(true);
  await runCliCaptured(['consolidate', '--force', '--in-process'], { cwd: test.root, env: env() });
  expect((await show()).facts.find((fact) => fact.use !== null)?.use).toEqual({
    reads: 1,
    lastRead: '2026-11-28',
  });

  // A second run reads nothing new: the count stays.
  await runCliCaptured(['consolidate', '--force', '--in-process'], { cwd: test.root, env: env() });
  expect((await show()).facts.find((fact) => fact.use !== null)?.use).toEqual({
    reads: 1,
    lastRead: '2026-11-28',
  });
});
