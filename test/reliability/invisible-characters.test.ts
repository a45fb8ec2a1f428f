import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INVISIBLE_CONTROLS } from '../../src/memory/visible-text.js';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { answerDefaults, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { MANUAL, cleanUpWorkspaces, consolidatorFor, createWorkspace, readTree } from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { HIDDEN } from './support/hidden.js';

/**
 * Bidi controls and zero-width characters appear in no file dreamd writes: topic files, MEMORY.md, the
 * quarantine, the review list, the ledger and run records. Each case is a real consolidation (real digest, SDK
 * over HTTP, screen, reconcile, transaction) of sessions and model answers strewn with those characters.
 */

const HIDDEN_ANYWHERE = new RegExp(INVISIBLE_CONTROLS.source, 'u');

/** Text of ordinary letters and spaces with hidden characters among them. */
const strewn = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...'abcdefgh ijklmnop qrstuvwxyz éü中文 12'.split('')) },
    { weight: 1, arbitrary: fc.constantFrom(...HIDDEN) },
  ),
  minLength: 4,
  maxLength: 40,
});

interface Case {
  readonly userLines: readonly string[];
  readonly title: string;
  readonly body: string;
}

let current: Case;
// The model returns one fact per session, and one more copying each user line: hidden characters and all.
const fake = useFakeAnthropic({
  scope: 'all',
  answer: (request: RecordedAnthropicRequest): AnthropicReply => {
    const facts = sessionsInPrompt(request.prompt).flatMap((session) => [
      {
        type: 'user',
        title: current.title,
        body: current.body,
        ...answerDefaults(session),
        evidence: 'user',
      },
      ...current.userLines.map((line, index) => ({
        type: 'project',
        title: `Line ${index} ${line}`,
        body: `The project note says ${line}`,
        why: `because ${line}`,
        howToApply: null,
        observed: session.date,
        sources: [session.id],
        replaces: [],
        confidence: 1,
        evidence: 'user',
      })),
    ]);
    return { json: { facts } };
  },
});
afterAll(cleanUpWorkspaces);

describe('hidden and bidi characters', () => {
  it('appear in no file dreamd writes, whatever the sessions and the model say', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          userLines: fc.array(strewn, { minLength: 1, maxLength: 3 }),
          title: strewn,
          body: strewn,
        }),
        async (generated) => {
          current = generated;
          const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'hidden' }] });
          const space = workspace.space('hidden');
          const messages = generated.userLines.map((content, index) => ({
            role: 'user',
            ts: `2026-11-20T10:0${index}:00Z`,
            content,
          }));
          writeFileSync(
            join(space.sessionsDir, 'strewn.json'),
            JSON.stringify({
              id: 'strewn',
              startedAt: '2026-11-20T10:00:00Z',
              endedAt: '2026-11-20T11:00:00Z',
              messages,
            }),
          );
          const summary = await consolidatorFor(workspace.config)(space, MANUAL);
          expect(summary.status).toBe('completed');
          const files = readTree(space.memoryDir);
          expect([...files.keys()].some((path) => path.startsWith('.dreamd/runs/'))).toBe(true);
          for (const [path, content] of files) expect(HIDDEN_ANYWHERE.test(content), path).toBe(false);
        },
      ),
      { numRuns: 12 },
    );
  });
});
