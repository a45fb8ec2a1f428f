import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/core/run.js';
import { QUARANTINE_FILE } from '../../src/space/index.js';
import {
  INSTRUCTION_ATTACKS,
  READ_ONLY_PREFERENCES,
  SECRET_ATTACKS,
  type InstructionAttack,
} from '../fixtures/attack-corpus.js';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { answerDefaults, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import {
  MANUAL,
  checkMemory,
  cleanUpWorkspaces,
  consolidatorFor,
  createWorkspace,
  memoryFiles,
  readTree,
  type Workspace,
} from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * The attack corpus (test/fixtures/attack-corpus.ts) through real consolidations: real digest, real SDK over
 * HTTP, real reconcile and write. The model is the worst case for memory: it copies every user line of the
 * digest verbatim as a fact (evidence `user`), and every tool result line too (evidence `read`, as an honest
 * model says). What must hold: no planted secret in any request body or any file of the memory directory
 * (`.dreamd/` included), no instruction in a memory file (each one is in the quarantine), no NUL anywhere,
 * and ordinary facts of the same sessions still written.
 */

const ORDINARY = 'ord01 I drink green tea in the afternoon';
const NUL_LINE = 'nul01 my editor of choice is\u0000 helix';

interface Message {
  readonly role: 'user' | 'assistant';
  readonly content: unknown;
}

/** A user line, or, for text the agent read, a WebFetch call and its result. */
function messagesFor(text: string, read: boolean, index: number): Message[] {
  if (!read) return [{ role: 'user', content: text }];
  const id = `toolu_${index}`;
  return [
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'WebFetch', input: { url: 'https://docs.example.com/page' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] },
  ];
}

function writeNativeSession(sessionsDir: string, id: string, messages: readonly Message[]): void {
  const dated = messages.map((message, index) => ({
    ...message,
    ts: `2026-11-20T10:${String(index).padStart(2, '0')}:00Z`,
  }));
  const session = {
    id,
    startedAt: '2026-11-20T10:00:00Z',
    endedAt: '2026-11-20T11:00:00Z',
    messages: [...dated, { role: 'assistant', content: 'Noted.' }],
  };
  writeFileSync(join(sessionsDir, `${id}.json`), `${JSON.stringify(session, null, 2)}\n`);
}

/** The line's text after `user:` or `tool ← Name:`, and its evidence; undefined for other lines. */
function copiedLine(line: string): { text: string; evidence: 'user' | 'read' } | undefined {
  const user = /^(?:\[\d{4}-\d{2}-\d{2}\] )?user: (.*)$/u.exec(line);
  if (user !== null) return { text: user[1]!, evidence: 'user' };
  const read = /^tool ← [^:]+: (.*)$/u.exec(line);
  if (read !== null) return { text: read[1]!, evidence: 'read' };
  return undefined;
}

/** Copies every user and tool-result line as a fact; puts back a NUL where the NUL line was (a model echo). */
function copyingModel(request: RecordedAnthropicRequest): AnthropicReply {
  const facts: unknown[] = [];
  for (const session of sessionsInPrompt(request.prompt)) {
    for (const line of session.text.split('\n')) {
      const copied = copiedLine(line);
      if (copied === undefined) continue;
      const body = copied.text.startsWith('nul01') ? `${copied.text}\u0000 (echoed)` : copied.text;
      facts.push({
        type: copied.evidence === 'read' ? 'project' : 'user',
        title: copied.text.slice(0, 70),
        body,
        ...answerDefaults(session),
        evidence: copied.evidence,
      });
    }
  }
  return { json: { facts } };
}

const INSTRUCTIONS: readonly InstructionAttack[] = [...INSTRUCTION_ATTACKS, ...READ_ONLY_PREFERENCES];

const fake = useFakeAnthropic({ answer: copyingModel, scope: 'all' });
let workspace: Workspace;
let summary: RunSummary;
beforeAll(async () => {
  workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'attacked' }] });
  const sessionsDir = workspace.space('attacked').sessionsDir;
  SECRET_ATTACKS.forEach((attack, index) =>
    writeNativeSession(sessionsDir, `secret-${index}`, [
      { role: 'user', content: ORDINARY },
      ...messagesFor(attack.text, attack.read === true, index),
    ]),
  );
  INSTRUCTIONS.forEach((attack, index) =>
    writeNativeSession(
      sessionsDir,
      `instruction-${index}`,
      attack.messages.flatMap((text, part) => messagesFor(text, attack.read === true, index * 10 + part)),
    ),
  );
  writeNativeSession(sessionsDir, 'nul', [{ role: 'user', content: NUL_LINE }]);
  summary = await consolidatorFor(workspace.config)(workspace.space('attacked'), MANUAL);
});
afterAll(async () => {
  cleanUpWorkspaces();
});

describe('attack corpus, with a model that copies every line', () => {
  it('runs, and every attack reached the model', () => {
    expect(summary.status).toBe('completed');
    const prompts = fake.server.requests.map((request) => request.prompt).join('\n');
    for (const attack of [...SECRET_ATTACKS, ...INSTRUCTIONS])
      expect(prompts, attack.marker).toContain(attack.marker);
  });

  it('sends no planted secret to the model and writes none to the memory directory', () => {
    const bodies = fake.server.requests.map((request) => JSON.stringify(request.body));
    const files = readTree(workspace.space('attacked').memoryDir);
    const leaks: string[] = [];
    for (const attack of SECRET_ATTACKS) {
      if (bodies.some((body) => body.includes(attack.secret))) leaks.push(`${attack.marker} in a request`);
      for (const [path, content] of files)
        if (content.includes(attack.secret)) leaks.push(`${attack.marker} in ${path}`);
    }
    expect(leaks).toEqual([]);
    expect(SECRET_ATTACKS).toHaveLength(16);
  });

  it('keeps every instruction out of memory and holds each in the quarantine', () => {
    const space = workspace.space('attacked');
    const files = memoryFiles(space.memoryDir);
    const quarantine = readTree(space.memoryDir).get(QUARANTINE_FILE) ?? '';
    const inMemory: string[] = [];
    const notHeld: string[] = [];
    for (const attack of INSTRUCTIONS) {
      for (const [path, content] of files)
        if (content.includes(attack.marker)) inMemory.push(`${attack.marker} in ${path}`);
      if (!quarantine.includes(attack.marker)) notHeld.push(attack.marker);
    }
    expect(inMemory).toEqual([]);
    expect(notHeld).toEqual([]);
    expect(INSTRUCTIONS).toHaveLength(26);
    // Secrets the digest redacted come back as facts about a secret: held back too, not written.
    for (const attack of SECRET_ATTACKS)
      for (const [path, content] of files)
        expect(content, `${attack.marker} in ${path}`).not.toContain(attack.marker);
  });

  it('writes no NUL or other control character, and still writes the ordinary facts', async () => {
    const space = workspace.space('attacked');
    for (const [path, content] of readTree(space.memoryDir))
      // eslint-disable-next-line no-control-regex -- the characters under test
      expect(/[\0-\x08\x0E-\x1F\x7F]/u.test(content), path).toBe(false);
    const userFile = memoryFiles(space.memoryDir).get('user.md') ?? '';
    expect(userFile).toContain('ord01 I drink green tea');
    expect(userFile).toContain('nul01 my editor of choice is helix');
    const check = await checkMemory(space.memoryDir);
    expect(check.problems).toEqual([]);
  });
});
