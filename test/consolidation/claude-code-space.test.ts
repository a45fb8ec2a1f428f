import { describe, expect, it } from 'vitest';
import { loadMemory } from '../../src/space/index.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { claudeCodeHome } from './helpers.js';

const fake = useFakeAnthropic();

describe('a Claude Code project directory as a space', () => {
  it('consolidates the real Claude Code transcripts into the project memory folder Claude Code reads', async () => {
    const { config, consolidate } = claudeCodeHome(fake);
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
    const summary = await consolidate();
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
