import { describe, expect, it } from 'vitest';
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
  checkMemory,
  copiedLine,
  memoryFiles,
  readTree,
  readWithTool,
  writeNativeSession,
  type SessionMessage,
} from './support/harness.js';
import { useOneRun } from './support/one-run.js';

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

/** A user line, or, for text the agent read, a WebFetch call and its result. */
function messagesFor(text: string, read: boolean, index: number): SessionMessage[] {
  if (!read) return [{ role: 'user', content: text }];
  return readWithTool(text, `toolu_${index}`, {
    name: 'WebFetch',
    input: { url: 'https://docs.example.com/page' },
  });
}

/** A session of these messages, the agent's acknowledgement last. */
function writeAttackSession(sessionsDir: string, id: string, messages: readonly SessionMessage[]): void {
  writeNativeSession(sessionsDir, id, [...messages, { role: 'assistant', content: 'Noted.' }]);
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

const run = useOneRun({
  answer: copyingModel,
  space: { id: 'attacked' },
  write: (sessionsDir) => {
    SECRET_ATTACKS.forEach((attack, index) =>
      writeAttackSession(sessionsDir, `secret-${index}`, [
        { role: 'user', content: ORDINARY },
        ...messagesFor(attack.text, attack.read === true, index),
      ]),
    );
    INSTRUCTIONS.forEach((attack, index) =>
      writeAttackSession(
        sessionsDir,
        `instruction-${index}`,
        attack.messages.flatMap((text, part) => messagesFor(text, attack.read === true, index * 10 + part)),
      ),
    );
    writeAttackSession(sessionsDir, 'nul', [{ role: 'user', content: NUL_LINE }]);
  },
});

describe('attack corpus, with a model that copies every line', () => {
  it('runs, and every attack reached the model', () => {
    expect(run.summary.status).toBe('completed');
    const prompts = run.fake.server.requests.map((request) => request.prompt).join('\n');
    for (const attack of [...SECRET_ATTACKS, ...INSTRUCTIONS])
      expect(prompts, attack.marker).toContain(attack.marker);
  });

  it('sends no planted secret to the model and writes none to the memory directory', () => {
    const bodies = run.fake.server.requests.map((request) => JSON.stringify(request.body));
    const files = readTree(run.space.memoryDir);
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
    const space = run.space;
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
    const space = run.space;
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
