import { appendFile, copyFile, mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadMemory, readLedger } from '../../src/space/index.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { CLAUDE_CODE_FIXTURES, FIXTURE } from '../transcripts/helpers.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { useClaudeCodeProject, STAGING_HOST_FACT } from './helpers.js';

const YESTERDAY = new Date('2026-11-28T09:00:00Z');
const PARENT_ID = '0790ea37-90df-4d30-8fdf-0bfe301b8f3e';

const fake = useFakeAnthropic();
const project = useClaudeCodeProject(fake);
beforeEach(async () => {
  await mkdir(join(project().space.sessionsDir, PARENT_ID, 'subagents'), { recursive: true });
});

describe('a run over Claude Code transcripts', () => {
  it('sends the slash command arguments and the sub-agent answer to the model, and counts the parent once', async () => {
    const parent = join(project().space.sessionsDir, `${PARENT_ID}.jsonl`);
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.summaryTask), parent);
    // The fixture ends without a newline, as Claude Code leaves a file between two writes.
    await appendFile(
      parent,
      '\n' +
        JSON.stringify({
          type: 'user',
          sessionId: PARENT_ID,
          timestamp: '2026-01-15T23:30:00.000Z',
          message: {
            role: 'user',
            content:
              '<command-message>deploy is running…</command-message>\n<command-name>/deploy</command-name>\n<command-args>staging, our staging box is stg-7</command-args>',
          },
        }) +
        '\n',
    );
    const subagent = join(project().space.sessionsDir, PARENT_ID, 'subagents', 'agent-ab94da7.jsonl');
    await writeFile(
      subagent,
      [
        {
          type: 'user',
          isSidechain: true,
          agentId: 'ab94da7',
          sessionId: PARENT_ID,
          message: { role: 'user', content: 'Create docs/color.md in teal.' },
        },
        {
          type: 'assistant',
          isSidechain: true,
          agentId: 'ab94da7',
          sessionId: PARENT_ID,
          message: {
            id: 'msg_s',
            role: 'assistant',
            content: [{ type: 'text', text: 'Done: teal is the team palette colour.' }],
          },
        },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n') + '\n',
    );
    // The old layout's copy of the same sub-agent, next to the sessions: never a session of its own.
    await copyFile(subagent, join(project().space.sessionsDir, 'agent-ab94da7.jsonl'));
    for (const file of [parent, subagent, join(project().space.sessionsDir, 'agent-ab94da7.jsonl')]) {
      await utimes(file, YESTERDAY, YESTERDAY);
    }
    fake.server.setDefault(
      scriptedExtractor([
        STAGING_HOST_FACT,
        {
          trigger: 'sub-agent ← Done: teal is the team palette colour',
          type: 'project',
          title: 'Palette colour',
          body: 'Teal.',
        },
      ]),
    );
    const summary = await project().run();
    expect(summary.status).toBe('completed');
    expect(summary.sessions).toEqual([PARENT_ID]);
    expect(summary.problems).toEqual([]);
    const prompt = fake.server.requests[0]?.prompt ?? '';
    expect(prompt).toContain('user: /deploy staging, our staging box is stg-7');
    const memory = await loadMemory(project().space.memoryDir);
    expect(memory.facts.map((fact) => fact.title).sort()).toEqual(['Palette colour', 'Staging host']);
    expect(Object.keys((await readLedger(project().space.memoryDir)).sessions)).toEqual([PARENT_ID]);
  });
});
