import { cpSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import { loadMemory } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { FORCED_RUN } from '../support/space.js';

const FIXTURES = new URL('../fixtures/claude-code/', import.meta.url).pathname;

const fake = useFakeAnthropic();

describe('a Claude Code project directory as a space', () => {
  it('consolidates the real Claude Code transcripts into the project memory folder Claude Code reads', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dreamd-claude-'));
    const project = join(root, '.claude', 'projects', '-home-me-repo');
    cpSync(FIXTURES, project, { recursive: true, filter: (source) => !source.endsWith('.md') });
    // Claude Code sessions have no endedAt: they settle once quiet for quietMinutes.
    const old = new Date('2026-11-01T00:00:00Z');
    for (const name of readdirSync(project)) utimesSync(join(project, name), old, old);
    const path = join(root, 'dreamd.config.json');
    writeFileSync(
      path,
      JSON.stringify({
        spaces: [{ id: 'repo', sessions: project, memory: join(project, 'memory'), format: 'claude-code' }],
      }),
    );
    const config = loadConfig({
      path,
      env: {
        DREAMD_MODEL_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        DREAMD_MODEL_MAX_RETRIES: '0',
      },
      cwd: root,
    });
    fake.server.setDefault(
      scriptedExtractor([
        {
          trigger: 'hello.sh',
          type: 'project',
          title: 'hello.sh prints Hello world',
          body: 'The repo has a hello.sh script that prints "Hello world".',
        },
      ]),
    );
    const summary = await createConsolidator({ config, model: createModel(config.model) })(
      config.spaces[0]!,
      FORCED_RUN,
    );
    expect(summary.status).toBe('completed');
    expect(summary.sessions).toHaveLength(3);
    expect(summary.calls).toBe(1);
    const prompt = fake.server.requests[0]!.prompt;
    expect(prompt).toContain('Write a shell script called hello.sh');
    // Hook boilerplate and tool noise stay out of the digest.
    expect(prompt).not.toContain('Stop hook feedback');
    expect(prompt).not.toContain('<system-reminder>');
    const memory = await loadMemory(config.spaces[0]!.memoryDir);
    expect(memory.facts.map((fact) => fact.title)).toEqual(['hello.sh prints Hello world']);
    expect(memory.problems).toEqual([]);
  });
});
