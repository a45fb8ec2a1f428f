/**
 * What the project already says is not stored again: the CLAUDE.md and AGENTS.md of the working directory a
 * Claude Code transcript names are shown to the model as known, and a fact they state is not kept.
 */
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  docStatements,
  splitAlreadyStated,
  type ProjectDoc,
} from '../../src/consolidation/extraction/project-docs.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { loadMemory } from '../../src/space/index.js';
import { scriptedExtractor } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { useClaudeCodeProject, STAGING_HOST_FACT } from './helpers.js';

const YESTERDAY = new Date('2026-11-28T09:00:00Z');
const SESSION_ID = '5b1f3c2e-8d4a-4c1b-9e7f-2a6d8c0e4b13';
const CLAUDE_MD = `# Harbor

Conventions every agent follows here:

- Always run \`make lint\` before you commit.
- Use pnpm, never npm.

\`\`\`sh
make dev   # not a statement: inside a fence
\`\`\`
`;

describe('the statements of an instruction file', () => {
  it('are its bullet and paragraph lines, without headings or code', () => {
    expect(docStatements(CLAUDE_MD)).toEqual([
      'Conventions every agent follows here:',
      'Always run `make lint` before you commit.',
      'Use pnpm, never npm.',
    ]);
  });

  it('hold a reworded candidate back, and keep one that adds to them', () => {
    const docs: ProjectDoc[] = [{ file: '/p/CLAUDE.md', statements: docStatements(CLAUDE_MD) }];
    const candidate = (title: string, body: string): ExtractedFact =>
      ({ type: 'feedback', title, body, observed: '2026-11-28', sources: ['s'] }) as unknown as ExtractedFact;
    const { kept, stated } = splitAlreadyStated(
      [
        candidate('Lint before committing', 'Run make lint before committing.'),
        candidate('Lint in CI too', 'The CI pipeline also runs make lint on every branch, with eslint 9.'),
      ],
      docs,
    );
    expect(stated.map((entry) => entry.candidate.title)).toEqual(['Lint before committing']);
    expect(kept.map((entry) => entry.title)).toEqual(['Lint in CI too']);
  });
});

const fake = useFakeAnthropic();
/** The project "harbor": its working directory, and its Claude Code project folder of transcripts and memory. */
let workdir: string;
const project = useClaudeCodeProject(fake, 'harbor');
beforeEach(async () => {
  workdir = join(project().test.root, 'harbor');
  await mkdir(workdir, { recursive: true });
});

describe("a run over a project's sessions", () => {
  it('shows CLAUDE.md as known, does not keep a fact it states, counts it, and never edits it', async () => {
    await writeFile(join(workdir, 'CLAUDE.md'), CLAUDE_MD);
    const line = (type: 'user' | 'assistant', text: string, id?: string) => ({
      type,
      cwd: workdir,
      sessionId: SESSION_ID,
      timestamp: '2026-11-28T09:00:00.000Z',
      message:
        id === undefined
          ? { role: type, content: text }
          : { id, role: type, content: [{ type: 'text', text }] },
    });
    const transcript = join(project().space.sessionsDir, `${SESSION_ID}.jsonl`);
    await writeFile(
      transcript,
      [
        line('user', 'Remember: run make lint before committing. Also our staging box is stg-7.'),
        line('assistant', 'Noted both.', 'msg_1'),
      ]
        .map((entry) => JSON.stringify(entry))
        .join('\n') + '\n',
    );
    await utimes(transcript, YESTERDAY, YESTERDAY);
    fake.server.setDefault(
      scriptedExtractor([
        {
          trigger: 'run make lint before committing',
          type: 'feedback',
          title: 'Lint first',
          body: 'Run make lint before committing.',
        },
        STAGING_HOST_FACT,
      ]),
    );
    const summary = await project().run();

    expect(summary.status).toBe('completed');
    expect(summary.alreadyInProjectFiles).toBe(1);
    const request = fake.server.requests[0]!;
    expect(JSON.stringify(request.body.messages)).toContain("Already in the project's instruction files");
    expect(JSON.stringify(request.body.messages)).toContain('Always run `make lint` before you commit.');
    const titles = (await loadMemory(project().space.memoryDir)).facts.map((fact) => fact.title);
    expect(titles).toEqual(['Staging host']);
    expect(await readFile(join(workdir, 'CLAUDE.md'), 'utf8')).toBe(CLAUDE_MD);
  });
});
