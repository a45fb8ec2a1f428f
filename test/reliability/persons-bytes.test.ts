import fc from 'fast-check';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INVISIBLE_CONTROLS } from '../../src/memory/visible-text.js';
import type { Config, Space } from '../../src/config/schema.js';
import type { RunSummary } from '../../src/core/run.js';
import { splitIndexFile } from '../../src/memory/index-block.js';
import { rollbackRun } from '../../src/space/index.js';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { answerDefaults, sessionsInPrompt, type ScriptedFact } from '../../harness/scripted-extractor.js';
import { MANUAL, cleanUpWorkspaces, consolidatorFor, createWorkspace } from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { HIDDEN } from './support/hidden.js';
import { claudeCodeHome, HELLO_SCRIPT_FACT } from '../consolidation/helpers.js';

/**
 * A person's bytes pass through every file dreamd writes unchanged: the zero-width non-joiner of a Persian
 * word, the joiners of an emoji sequence, a Hebrew right-to-left mark, an Arabic letter mark, a word joiner, a
 * byte-order mark, CRLF, no final newline; outside dreamd's block of `MEMORY.md` and `AGENTS.md`, and in the
 * hand-written lines of a topic file. Only the text dreamd writes itself (facts from the model, its block's
 * lines) is cleaned. Real consolidations: real digest, the SDK over HTTP, screen, reconcile, transaction; then
 * a rollback, which puts the person's bytes back exactly.
 */

const HIDDEN_ANYWHERE = new RegExp(INVISIBLE_CONTROLS.source, 'u');

/** Words people write with those characters in them. */
const WORDS = [
  'می‌خواهم', // Persian: a zero-width non-joiner inside the word
  '👨‍👩‍👧', // a family: two zero-width joiners
  '👩‍💻', // a woman technologist
  '\u200Fשלום', // a Hebrew right-to-left mark
  '\u061Cمرحبا', // an Arabic letter mark
  'no\u2060break', // a word joiner
];

/** A person's line: ordinary words, their words, and any hidden character among them. */
const personLine = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('notes', 'build', 'for', 'the', 'team', 'café', '中文') },
      { weight: 2, arbitrary: fc.constantFrom(...WORDS) },
      { weight: 1, arbitrary: fc.constantFrom(...HIDDEN) },
    ),
    { minLength: 2, maxLength: 8 },
  )
  .map((words) => words.join(' '));

/**
 * Text the model returns with zero-width joiners (the one hidden character the screen lets through, for
 * emoji): dreamd's own text, which must come out clean. Other hidden characters hold a fact back.
 */
const MODEL_TITLE = 'Deploy night build 👩\u200D💻';
const MODEL_BODY = 'The nightly build deploys at 02:00\u200D from the release branch.';

const fake = useFakeAnthropic({
  scope: 'all',
  answer: (request: RecordedAnthropicRequest): AnthropicReply => {
    const facts = sessionsInPrompt(request.prompt).map((session) => ({
      type: 'project',
      title: MODEL_TITLE,
      body: MODEL_BODY,
      ...answerDefaults(session),
      evidence: 'user',
    }));
    return { json: { facts } };
  },
});
afterAll(cleanUpWorkspaces);

/** One session that teaches the nightly build, consolidated: the run's summary, after checking it completed. */
async function nightRun(config: Config, space: Space): Promise<RunSummary> {
  writeFileSync(
    join(space.sessionsDir, 'night.json'),
    JSON.stringify({
      id: 'night',
      startedAt: '2026-11-20T10:00:00Z',
      endedAt: '2026-11-20T11:00:00Z',
      messages: [{ role: 'user', ts: '2026-11-20T10:00:00Z', content: 'Deploy the nightly build at 02:00.' }],
    }),
  );
  const summary = await consolidatorFor(config)(space, MANUAL);
  expect(summary.status).toBe('completed');
  return summary;
}

/** The file with each of the person's pieces taken out once: what dreamd wrote itself. */
function withoutTheirs(text: string, pieces: readonly string[]): string {
  let rest = text;
  for (const piece of pieces) {
    expect(rest.includes(piece), `a person's bytes kept: ${JSON.stringify(piece)}`).toBe(true);
    rest = rest.replace(piece, '');
  }
  return rest;
}

describe("a person's bytes in the files dreamd writes", () => {
  it('stay byte for byte in MEMORY.md and a topic file (topics layout), while the facts dreamd adds are clean', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          index: fc.array(personLine, { minLength: 1, maxLength: 3 }),
          preamble: personLine,
          bom: fc.boolean(),
          crlf: fc.boolean(),
        }),
        async ({ index, preamble, bom, crlf }) => {
          const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'bytes' }] });
          const space = workspace.space('bytes');
          const eol = crlf ? '\r\n' : '\n';
          const indexText = `${bom ? '\uFEFF' : ''}# My notes${eol}${index.join(eol)}`;
          const userText =
            `---\nname: User\ndescription: Who the user is\ntype: user\n---\n\n${preamble}\n\n` +
            `## Written by hand ${WORDS[1]}\n\n${preamble} ${WORDS[0]}\n`;
          writeFileSync(join(space.memoryDir, 'MEMORY.md'), indexText);
          writeFileSync(join(space.memoryDir, 'user.md'), userText);
          const summary = await nightRun(workspace.config, space);

          const indexAfter = readFileSync(join(space.memoryDir, 'MEMORY.md'), 'utf8');
          const parts = splitIndexFile(indexAfter);
          expect(parts.kind).toBe('block');
          expect(parts.before + parts.after).toBe(indexText);
          expect(HIDDEN_ANYWHERE.test(parts.blockLines.join('\n'))).toBe(false);
          const project = readFileSync(join(space.memoryDir, 'project.md'), 'utf8');
          expect(project).toContain('Deploy night build');
          expect(HIDDEN_ANYWHERE.test(project)).toBe(false);
          // dreamd gives the hand-written entry its id and bookkeeping; the person's lines stay as typed.
          const user = readFileSync(join(space.memoryDir, 'user.md'), 'utf8');
          const ours = withoutTheirs(user, [
            `${preamble}\n`,
            `## Written by hand ${WORDS[1]}`,
            `${preamble} ${WORDS[0]}`,
          ]);
          expect(HIDDEN_ANYWHERE.test(ours), ours).toBe(false);

          await rollbackRun(space.memoryDir, summary.runId);
          expect(readFileSync(join(space.memoryDir, 'MEMORY.md'), 'utf8')).toBe(indexText);
          expect(readFileSync(join(space.memoryDir, 'user.md'), 'utf8')).toBe(userText);
        },
      ),
      { numRuns: 8 },
    );
  });

  it("stay in a person's hand-written entry of a topic file that dreamd rewrites", async () => {
    const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'entry' }] });
    const space = workspace.space('entry');
    const person = [`${WORDS.join(' ')} keep these`, `\u200Fשלום ${WORDS[2]} on the team`];
    const projectText =
      `---\nname: Project\ndescription: The project\ntype: project\n---\n\n${person[0]}\n\n` +
      `## Our stack ${WORDS[1]}\n\n${person[1]}\n`;
    writeFileSync(join(space.memoryDir, 'project.md'), projectText);
    const summary = await nightRun(workspace.config, space);
    const after = readFileSync(join(space.memoryDir, 'project.md'), 'utf8');
    expect(after).toContain('Deploy night build');
    const ours = withoutTheirs(after, [person[0]!, `## Our stack ${WORDS[1]}`, person[1]!]);
    expect(HIDDEN_ANYWHERE.test(ours), ours).toBe(false);
    await rollbackRun(space.memoryDir, summary.runId);
    expect(readFileSync(join(space.memoryDir, 'project.md'), 'utf8')).toBe(projectText);
  });

  const FACT: ScriptedFact = { ...HELLO_SCRIPT_FACT, title: `hello.sh prints ${WORDS[1]} Hello world` };
  const claudeFake = useFakeAnthropic({ facts: [FACT] });
  const PERSON_AGENTS = `# Agents ${WORDS.join(' ')}\n\nRun \`make check\` before you push ${WORDS[3]}.`;
  const SHAPES: Record<string, string> = {
    'a byte-order mark and LF': `\uFEFF${PERSON_AGENTS}\n`,
    'a byte-order mark and CRLF': `\uFEFF${PERSON_AGENTS.replaceAll('\n', '\r\n')}\r\n`,
    'a byte-order mark and no final newline': `\uFEFF${PERSON_AGENTS}`,
    'a byte-order mark alone before the text': `\uFEFF\n${PERSON_AGENTS}\n`,
  };
  for (const [shape, agentsText] of Object.entries(SHAPES)) {
    it(`stay in AGENTS.md with ${shape}, and in a Claude Code MEMORY.md`, async () => {
      const indexText = `\uFEFF- [Family](family.md) — ${WORDS[1]} ${WORDS[0]}\r\n- ${WORDS[4]} ${WORDS[5]}`;
      const home = claudeCodeHome(claudeFake, {
        space: { agentsMd: 'repo/AGENTS.md' },
        prepare: (root) => {
          mkdirSync(join(root, 'repo'));
          writeFileSync(join(root, 'repo', 'AGENTS.md'), agentsText);
          const memoryDir = join(root, '.claude', 'projects', '-home-me-repo', 'memory');
          mkdirSync(memoryDir, { recursive: true });
          writeFileSync(join(memoryDir, 'MEMORY.md'), indexText);
        },
      });
      const agentsMd = join(home.root, 'repo', 'AGENTS.md');
      const summary = await home.consolidate();
      expect(summary.status).toBe('completed');

      const agentsAfter = readFileSync(agentsMd, 'utf8');
      const agentsParts = splitIndexFile(agentsAfter, { file: agentsMd, legacy: false });
      expect(agentsParts.kind).toBe('block');
      expect(agentsParts.before + agentsParts.after).toBe(agentsText);
      expect(agentsParts.blockLines.join('\n')).toContain('hello.sh prints');
      expect(HIDDEN_ANYWHERE.test(agentsParts.blockLines.join('\n'))).toBe(false);

      const indexAfter = readFileSync(join(home.memoryDir, 'MEMORY.md'), 'utf8');
      const indexParts = splitIndexFile(indexAfter);
      expect(indexParts.before + indexParts.after).toBe(indexText);
      expect(HIDDEN_ANYWHERE.test(indexParts.blockLines.join('\n'))).toBe(false);

      await rollbackRun(home.memoryDir, summary.runId);
      expect(readFileSync(agentsMd, 'utf8')).toBe(agentsText);
      expect(readFileSync(join(home.memoryDir, 'MEMORY.md'), 'utf8')).toBe(indexText);
    });
  }
});
