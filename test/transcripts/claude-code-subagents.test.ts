import { copyFile, mkdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { digestSession } from '../../src/digest/digest-session.js';
import { readSession } from '../../src/transcripts/read-session.js';
import { readSettledSessions } from '../../src/transcripts/read-settled-sessions.js';
import { countByStatus, scanSessions } from '../../src/transcripts/scan-sessions.js';
import type { Session, SubagentPart } from '../../src/transcripts/types.js';
import {
  CLAUDE_CODE_FIXTURES,
  FIXTURE,
  MAX_BYTES,
  claudeCodeSpace,
  createLedger,
  ledgerEntry,
  readTranscript,
} from './helpers.js';
import { useTempDir, createTempDir } from '../support/fixtures.js';

/** The summary-task fixture's session: its `Task` result (line 7) names sub-agent `ab94da7`. */
const PARENT_ID = '0790ea37-90df-4d30-8fdf-0bfe301b8f3e';
const AGENT_ID = 'ab94da7';
const NOW = new Date('2026-11-26T12:00:00Z');
const AN_HOUR_AGO = new Date(NOW.getTime() - 60 * 60_000);

/** Fields every line Claude Code 2.1 writes carries, as in the fixtures. */
function envelope(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    parentUuid: null,
    isSidechain: false,
    userType: 'external',
    cwd: '/Users/dev/work/cli',
    sessionId: PARENT_ID,
    version: '2.1.7',
    gitBranch: 'main',
    uuid: `u-${Math.random().toString(16).slice(2, 10)}`,
    timestamp: '2026-01-15T23:24:00.000Z',
    ...fields,
  };
}

/** A sub-agent's file as Claude Code ≥ 2.0 writes it: every line a sidechain line with the agent's id. */
function subagentLines(agentId: string): string {
  const sidechain = { isSidechain: true, agentId };
  const lines = [
    envelope({
      ...sidechain,
      type: 'user',
      message: { role: 'user', content: 'Create a file called "color.md" in docs/ with the color "teal".' },
    }),
    envelope({
      ...sidechain,
      type: 'assistant',
      message: {
        model: 'claude-haiku-4-5-20251001',
        id: 'msg_sub_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_sub_1', name: 'Write', input: { file_path: 'docs/color.md' } },
        ],
      },
    }),
    envelope({
      ...sidechain,
      type: 'user',
      message: {
        role: 'user',
        content: [{ tool_use_id: 'toolu_sub_1', type: 'tool_result', content: 'File created successfully' }],
      },
    }),
    envelope({
      ...sidechain,
      type: 'assistant',
      message: {
        model: 'claude-haiku-4-5-20251001',
        id: 'msg_sub_2',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Created docs/color.md: teal, #008080, the team palette colour.' }],
      },
    }),
  ];
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

function subagentParts(session: Session): SubagentPart[] {
  return session.messages.flatMap((message) =>
    message.parts.filter((part): part is SubagentPart => part.kind === 'subagent'),
  );
}

describe('Claude Code slash commands', () => {
  const directory = useTempDir('cc-commands');

  it('keeps a slash command typed with arguments as the user words, and leaves /exit and its output out', async () => {
    const lines = [
      // Claude Code 2.1 order: message, name, args; the command's expansion follows as an isMeta line.
      envelope({
        type: 'user',
        message: {
          role: 'user',
          content:
            '<command-message>review-pr is running…</command-message>\n<command-name>/review-pr</command-name>\n<command-args>412 we always squash-merge into main</command-args>',
        },
      }),
      envelope({
        type: 'user',
        isMeta: true,
        message: { role: 'user', content: [{ type: 'text', text: 'Review pull request 412 and …' }] },
      }),
      envelope({
        type: 'assistant',
        message: { id: 'msg_1', role: 'assistant', content: [{ type: 'text', text: 'Reviewing 412.' }] },
      }),
      // Claude Code 2.0 order, as in the compact-boundary fixture: a local command and its stdout.
      envelope({
        type: 'user',
        message: {
          role: 'user',
          content:
            '<command-name>/exit</command-name>\n            <command-message>exit</command-message>\n            <command-args></command-args>',
        },
      }),
      envelope({
        type: 'user',
        message: { role: 'user', content: '<local-command-stdout>Goodbye!</local-command-stdout>' },
      }),
    ];
    await writeFile(
      join(directory.path, `${PARENT_ID}.jsonl`),
      lines.map((line) => JSON.stringify(line)).join('\n'),
    );
    const session = await readTranscript('claude-code', directory.path, `${PARENT_ID}.jsonl`);
    expect(session.messages.map((message) => message.meta === true)).toEqual([
      false,
      true,
      false,
      true,
      true,
    ]);
    const digest = digestSession(session).text;
    expect(digest).toContain('user: /review-pr 412 we always squash-merge into main');
    expect(digest).not.toContain('/exit');
    expect(digest).not.toContain('Goodbye');
    expect(digest).not.toContain('Review pull request 412');
  });
});

describe('Claude Code sub-agent files', () => {
  const directory = useTempDir('cc-subagents');
  let parent: string;
  beforeEach(async () => {
    parent = join(directory.path, `${PARENT_ID}.jsonl`);
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.summaryTask), parent);
    await utimes(parent, AN_HOUR_AGO, AN_HOUR_AGO);
  });

  function read(fromMessage?: number): Promise<Session> {
    return readTranscript('claude-code', directory.path, `${PARENT_ID}.jsonl`, { fromMessage });
  }

  it('reads a v2 sub-agent file with its parent: its brief and final answer on the message of its result', async () => {
    const subagents = join(directory.path, PARENT_ID, 'subagents');
    await mkdir(subagents, { recursive: true });
    await writeFile(join(subagents, `agent-${AGENT_ID}.jsonl`), subagentLines(AGENT_ID));
    const session = await read();
    expect(session.messageCount).toBe(4);
    expect(session.messages[2]?.parts.map((part) => part.kind)).toEqual(['tool-result', 'subagent']);
    expect(subagentParts(session)).toEqual([
      {
        kind: 'subagent',
        agentId: AGENT_ID,
        toolCallId: 'toolu_01LY1C3Ff95ZoB66GNRDUWH1',
        prompt: 'Create a file called "color.md" in docs/ with the color "teal".',
        answer: 'Created docs/color.md: teal, #008080, the team palette colour.',
      },
    ]);
    expect(session.warnings).toEqual([]);
    const digest = digestSession(session).text;
    expect(digest).toContain('sub-agent → Create a file called "color.md" in docs/ with the color "teal".');
    expect(digest).toContain('sub-agent ← Created docs/color.md: teal, #008080, the team palette colour.');
    // The shorter result line of the same call is replaced, not repeated.
    expect(digest).not.toContain('tool ← Task');
  });

  it('counts a parent with sub-agent files as one settled session and records only the parent', async () => {
    const subagents = join(directory.path, PARENT_ID, 'subagents');
    await mkdir(subagents, { recursive: true });
    await writeFile(join(subagents, `agent-${AGENT_ID}.jsonl`), subagentLines(AGENT_ID));
    await writeFile(join(directory.path, `agent-${AGENT_ID}.jsonl`), subagentLines(AGENT_ID));
    const space = claudeCodeSpace(directory.path);
    const ledger = createLedger();
    const scan = await scanSessions({ space, ledger, now: NOW, quietMinutes: 30, maxBytes: MAX_BYTES });
    expect(scan.entries.map((entry) => entry.file)).toEqual([`${PARENT_ID}.jsonl`]);
    expect(countByStatus(scan).settled).toBe(1);
    const read = await readSettledSessions(scan, { ledger, maxBytes: MAX_BYTES });
    expect(read.records.map((record) => record.file)).toEqual([`${PARENT_ID}.jsonl`]);
    expect(read.problems).toEqual([]);
    expect(subagentParts(read.sessions[0] as Session)).toHaveLength(1);
  });

  it('never counts an old-layout agent file as new: once its parent is consolidated nothing is settled', async () => {
    // Claude Code < 2.0: the sub-agent's sidechain next to the sessions, with the parent's sessionId inside.
    await writeFile(join(directory.path, `agent-${AGENT_ID}.jsonl`), subagentLines(AGENT_ID));
    const space = claudeCodeSpace(directory.path);
    const first = await scanSessions({
      space,
      ledger: createLedger(),
      now: NOW,
      quietMinutes: 30,
      maxBytes: MAX_BYTES,
    });
    expect(countByStatus(first)).toMatchObject({ settled: 1, broken: 0 });
    // The old file is read with its parent, found by the agent id its result names.
    const session = await read();
    expect(subagentParts(session).map((part) => part.answer)).toEqual([
      'Created docs/color.md: teal, #008080, the team palette colour.',
    ]);
    const { size, mtimeMs } = await stat(parent);
    const ledger = createLedger([
      ledgerEntry({ sessionId: PARENT_ID, file: `${PARENT_ID}.jsonl`, messageCount: 4, size, mtimeMs }),
    ]);
    for (let tick = 0; tick < 3; tick += 1) {
      const scan = await scanSessions({ space, ledger, now: NOW, quietMinutes: 30, maxBytes: MAX_BYTES });
      expect(countByStatus(scan)).toEqual({ live: 0, settled: 0, consolidated: 1, broken: 0, 'kept-out': 0 });
    }
  });

  it('does not read a sub-agent again once the message of its result is consolidated', async () => {
    const subagents = join(directory.path, PARENT_ID, 'subagents');
    await mkdir(subagents, { recursive: true });
    await writeFile(join(subagents, `agent-${AGENT_ID}.jsonl`), subagentLines(AGENT_ID));
    const later = await read(3);
    expect(later.messages.map((message) => message.index)).toEqual([3]);
    expect(subagentParts(later)).toEqual([]);
  });

  it('refuses a sub-agent file that links outside the project or is over the size limit, with warnings', async () => {
    const subagents = join(directory.path, PARENT_ID, 'subagents');
    await mkdir(subagents, { recursive: true });
    const outside = await createTempDir('cc-outside');
    try {
      await writeFile(join(outside.path, 'secret.jsonl'), subagentLines(AGENT_ID));
      await symlink(join(outside.path, 'secret.jsonl'), join(subagents, `agent-${AGENT_ID}.jsonl`));
      const linked = await read();
      expect(subagentParts(linked)).toEqual([]);
      expect(linked.warnings[0]).toMatch(/outside the sessions directory/);
    } finally {
      await outside.remove();
    }
    await rm(join(subagents, `agent-${AGENT_ID}.jsonl`));
    // The parent (12 kB) is under the limit; its sub-agent's file, with a 30 kB progress line, is not.
    const padding = JSON.stringify({ type: 'progress', data: 'x'.repeat(30_000) });
    await writeFile(join(subagents, `agent-${AGENT_ID}.jsonl`), `${subagentLines(AGENT_ID)}${padding}\n`);
    const small = await readSession(`${PARENT_ID}.jsonl`, {
      format: 'claude-code',
      sessionsDir: directory.path,
      maxBytes: 20_000,
    });
    expect(subagentParts(small)).toEqual([]);
    expect(small.warnings[0]).toMatch(/bytes is over the limit of 20000 bytes/);
  });

  it('reads the parent with a warning when a sub-agent file cannot be read', async () => {
    const subagents = join(directory.path, PARENT_ID, 'subagents');
    await mkdir(subagents, { recursive: true });
    await writeFile(join(subagents, `agent-${AGENT_ID}.jsonl`), Buffer.from([0x7b, 0x00, 0x7d, 0x0a]));
    const session = await read();
    expect(session.messageCount).toBe(4);
    expect(subagentParts(session)).toEqual([]);
    expect(session.warnings).toHaveLength(1);
    expect(session.warnings[0]).toMatch(
      /^sub-agent ab94da7 \(message 2\): .*agent-ab94da7\.jsonl: NUL byte.*The file was skipped\.$/,
    );
  });
});
