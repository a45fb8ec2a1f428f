import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecall } from '../../src/agent/recall.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { INDEX_LIMITS, derivedFactId } from '../../src/memory/index.js';
import { REVIEW_FILE, loadMemory } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace, snapshotDirectory, FORCED_RUN } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { withoutBlock } from '../memory/helpers.js';

/** Claude Code memories of both vintages and a free-form note, as people and Claude Code leave them. */
const HAND_FILES: Record<string, string> = {
  'feedback_testing.md': [
    '---',
    'name: Integration tests hit a real database',
    'description: Never mock the database in integration tests',
    'metadata:',
    '  type: feedback',
    '  modified: 2026-10-02',
    '---',
    '',
    'Integration tests must hit a real database, never mocks.',
    '',
    '**Why:** a mocked test passed while the production migration failed.',
    '**How to apply:** every test under test/integration.',
    '',
  ].join('\n'),
  'user_role.md': [
    '---',
    'name: Role',
    'description: Data scientist working on logging',
    'type: user',
    '---',
    '',
    'The user is a data scientist investigating the logging pipeline.',
    '',
  ].join('\n'),
  'debugging.md': '# Debugging notes\n\nThe flaky arm64 job is a cache problem; see [[feedback_testing]].\n',
};

const HAND_INDEX = [
  '# Memory',
  '',
  '- [Integration tests hit a real database](feedback_testing.md) — never mock the database',
  '- [Role](user_role.md) — data scientist',
  '',
  '## Open Issues',
  `- ${'a very long hand-written line about the release train and who signs off on it, '.repeat(3)}`,
  '',
  '',
].join('\n');

function writeSession(dir: string, id: string, text: string): void {
  writeFileSync(
    join(dir, `${id}.json`),
    JSON.stringify({
      id,
      startedAt: '2026-11-20T10:00:00Z',
      endedAt: '2026-11-20T10:30:00Z',
      messages: [
        { role: 'user', content: text },
        { role: 'assistant', content: 'Noted.' },
      ],
    }),
  );
}

const fake = useFakeAnthropic();

describe('a memory folder shared with a person and Claude Code', () => {
  it('reads every memory it did not write, changes none of their bytes, and never adds a repeated fact twice', async () => {
    const { config, space } = createTestSpace({ modelUrl: fake.url });
    mkdirSync(space.memoryDir, { recursive: true });
    const written = new Date('2026-10-01T09:00:00Z');
    for (const [name, text] of Object.entries(HAND_FILES)) {
      writeFileSync(join(space.memoryDir, name), text);
      utimesSync(join(space.memoryDir, name), written, written);
    }
    writeFileSync(join(space.memoryDir, 'MEMORY.md'), HAND_INDEX);
    mkdirSync(space.sessionsDir, { recursive: true });
    writeSession(
      space.sessionsDir,
      's-tests',
      'Reminder: integration tests must hit a real database, never mocks.',
    );
    writeSession(
      space.sessionsDir,
      's-role',
      'I moved from data science to platform engineering last month.',
    );
    writeSession(space.sessionsDir, 's-deploy', 'We deploy with Argo CD from the main branch.');
    const before = snapshotDirectory(space.memoryDir);

    fake.server.setDefault(
      scriptedExtractor([
        {
          trigger: 'real database',
          type: 'feedback',
          title: 'Integration tests hit a real database',
          body: 'Integration tests must hit a real database, never mocks.',
        },
        {
          trigger: 'platform engineering',
          type: 'user',
          title: 'Platform engineer',
          body: 'The user moved from data science to platform engineering.',
          replacesTitle: 'Role',
        },
        {
          trigger: 'Argo CD',
          type: 'project',
          title: 'Deploys with Argo CD',
          body: 'The team deploys with Argo CD from the main branch.',
        },
      ]),
    );
    const consolidate = createConsolidator({ config, model: createModel(config.model) });
    const summary = await consolidate(space, FORCED_RUN);
    expect(summary.status).toBe('completed');

    // The model's "current memory" lists the memories dreamd did not write.
    const prompt = fake.server.requests[0]!.prompt;
    for (const title of ['Integration tests hit a real database', 'Role', 'Debugging notes'])
      expect(prompt).toContain(title);

    const after = snapshotDirectory(space.memoryDir);
    for (const name of Object.keys(HAND_FILES)) expect(after.get(name)).toBe(before.get(name));
    const index = after.get('MEMORY.md')!;
    expect(withoutBlock(index)).toBe(HAND_INDEX);
    expect(index.split('\n').length - 1).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
    expect(Buffer.byteLength(index)).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
    // The repeated rule is not added again: not in a topic file, not a second index line.
    expect(after.get('feedback.md') ?? '').not.toContain('real database');
    expect(index.match(/real database/g)).toHaveLength(1);
    // The free-form note is listed in dreamd's block; the files the person already links are not listed twice.
    expect(index).toContain('](debugging.md)');
    expect(index.match(/\]\(feedback_testing\.md\)/g)).toHaveLength(1);
    expect(index).toContain('Deploys with Argo CD');

    // The contradicted file stays as it is and is listed for review with the newer fact and its session.
    const review = after.get(REVIEW_FILE) ?? '';
    expect(review).toContain('## user_role.md');
    expect(review).toContain('platform engineering');
    expect(review).toContain('s-role');
    expect(
      summary.problems.some(
        (problem) => problem.file === 'user_role.md' && problem.reason.includes(REVIEW_FILE),
      ),
    ).toBe(true);

    // Search finds the memories dreamd did not write.
    const memory = await loadMemory(space.memoryDir);
    const results = await createRecall({ facts: memory.facts }).recall('arm64 cache flaky', { limit: 5 });
    expect(results[0]?.id).toBe(derivedFactId('file\ndebugging.md'));
    expect(memory.facts.find((fact) => fact.file === 'user_role.md')?.type).toBe('user');
    expect(memory.facts.find((fact) => fact.file === 'feedback_testing.md')).toMatchObject({
      type: 'feedback',
      why: 'a mocked test passed while the production migration failed.',
    });

    // A second run with nothing new changes no byte anywhere.
    writeSession(space.sessionsDir, 's-deploy-2', 'Again: we deploy with Argo CD from the main branch.');
    await consolidate(space, FORCED_RUN);
    const again = snapshotDirectory(space.memoryDir);
    for (const name of [...Object.keys(HAND_FILES), 'MEMORY.md', REVIEW_FILE])
      expect(again.get(name)).toBe(after.get(name));
    expect(readFileSync(join(space.memoryDir, 'MEMORY.md'), 'utf8')).toBe(index);
  });
});
