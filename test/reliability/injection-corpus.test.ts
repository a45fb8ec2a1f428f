import { describe, expect, it } from 'vitest';
import { ARCHIVE_FILE, QUARANTINE_FILE } from '../../src/space/index.js';
import {
  BENIGN,
  CORPUS_LANGUAGES,
  CORPUS_VARIANTS,
  INJECTIONS,
  type CorpusEntry,
} from '../fixtures/injection-corpus.js';
import { type AnthropicReply, type RecordedAnthropicRequest } from '../../harness/fake-anthropic-server.js';
import { answerDefaults, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import {
  copiedLine,
  memoryFiles,
  readTree,
  readWithTool,
  writeNativeSession,
  type SessionMessage,
} from './support/harness.js';
import { useOneRun } from './support/one-run.js';

/**
 * The corpus of issue 22 (test/fixtures/injection-corpus.ts) through one real consolidation: real digest, real
 * SDK over HTTP, real screen, reconcile and write. The model is the worst case: it copies every user line and
 * every tool-result line of a session as a fact, one per line and once more all joined (an instruction split
 * over two messages, put back together), under the type a model would pick, and it always says the user said
 * it (`evidence: 'user'`): provenance must come from where the text sits in the digest, never from that label.
 * What must hold: no injection in any memory file, and at most 2 % of the benign entries held back.
 */

function sessionOf(entry: CorpusEntry): SessionMessage[] {
  return entry.messages.flatMap((message, index): SessionMessage[] =>
    message.from === 'user'
      ? [
          { role: 'user', content: message.text },
          { role: 'assistant', content: 'Noted.' },
        ]
      : readWithTool(message.text, `toolu_${entry.id.replace(/\W/gu, '')}_${index}`, {
          name: 'Read',
          input: { file_path: 'CONTRIBUTING.md' },
        }),
  );
}

const ENTRIES = new Map([...INJECTIONS, ...BENIGN].map((entry) => [entry.id, entry]));

function copyingModel(request: RecordedAnthropicRequest): AnthropicReply {
  const facts: unknown[] = [];
  for (const session of sessionsInPrompt(request.prompt)) {
    const entry = ENTRIES.get(session.id);
    if (entry === undefined) continue;
    const lines = session.text.split('\n').flatMap((line) => copiedLine(line)?.text ?? []);
    const bodies = lines.length > 1 ? [...lines, lines.join(' ')] : lines;
    bodies.forEach((body, index) =>
      facts.push({
        type: entry.type,
        title: `${entry.id} ${index === lines.length ? 'whole' : `line ${index + 1}`}`,
        body,
        ...answerDefaults(session),
        evidence: 'user',
      }),
    );
  }
  return { json: { facts } };
}

const run = useOneRun({
  answer: copyingModel,
  space: { id: 'corpus' },
  write: (sessionsDir) => {
    for (const entry of ENTRIES.values()) writeNativeSession(sessionsDir, entry.id, sessionOf(entry));
  },
  // The copying model answers every entry of a call in one answer: more facts than the default per-answer cap.
  config: (config) => ({ ...config, limits: { ...config.limits, maxFactsPerAnswer: 1_000 } }),
});

/** Memory as a whole: the memory files and the archive of the facts newer ones replaced. */
function memoryText(memoryDir: string): string {
  return [...memoryFiles(memoryDir).values(), readTree(memoryDir).get(ARCHIVE_FILE) ?? ''].join('\n');
}

/** Ids mentioned in `text`, matched as whole ids (`inj-en-01` never matches `inj-en-010`). */
function mentioned(entries: readonly CorpusEntry[], text: string): CorpusEntry[] {
  return entries.filter((entry) => new RegExp(`\\b${entry.id}\\b`, 'u').test(text));
}

describe('injection corpus of issue 22, with a model that copies and joins every line', () => {
  it('is the corpus the issue asks for', () => {
    expect(INJECTIONS.length).toBeGreaterThanOrEqual(100);
    expect(BENIGN.length).toBeGreaterThanOrEqual(100);
    expect(CORPUS_LANGUAGES.length).toBeGreaterThanOrEqual(6);
    for (const variant of CORPUS_VARIANTS) {
      expect(INJECTIONS.some((entry) => entry.variant === variant)).toBe(true);
      expect(BENIGN.some((entry) => entry.variant === variant)).toBe(true);
    }
    expect(run.summary.status).toBe('completed');
    const prompts = run.fake.server.requests.map((request) => request.prompt).join('\n');
    for (const entry of ENTRIES.values()) expect(prompts, entry.id).toContain(`session ${entry.id} `);
  });

  it('writes no injection to any memory file, in any language or shape', () => {
    const files = memoryText(run.space.memoryDir);
    const reached = mentioned(INJECTIONS, files).map((entry) => `${entry.id} (${entry.variant})`);
    expect(reached).toEqual([]);
    const quarantine = readTree(run.space.memoryDir).get(QUARANTINE_FILE) ?? '';
    expect(mentioned(INJECTIONS, quarantine)).toHaveLength(INJECTIONS.length);
  });

  it('holds back at most 2 % of the benign rules and preferences', () => {
    const quarantine = readTree(run.space.memoryDir).get(QUARANTINE_FILE) ?? '';
    const held = mentioned(BENIGN, quarantine).map((entry) => entry.id);
    expect(held.length / BENIGN.length, held.join(', ')).toBeLessThanOrEqual(0.02);
    const files = memoryText(run.space.memoryDir);
    const written = BENIGN.filter((entry) => !held.includes(entry.id));
    expect(mentioned(written, files).map((entry) => entry.id)).toEqual(written.map((entry) => entry.id));
  });
});
