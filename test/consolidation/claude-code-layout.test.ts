/**
 * The `claude-code` layout end to end: real Claude Code transcripts (test/fixtures/claude-code) consolidated
 * into copies of the two Claude Code memory folders of test/fixtures/claude-code-memory, through the real
 * consolidation and the real Anthropic SDK against the fake server (the scripted extractor answers).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecall } from '../../src/agent/recall.js';
import { readFrontmatter } from '../../src/memory/claude-code-file.js';
import { parseFactFile } from '../../src/memory/fact-file.js';
import { INDEX_LIMITS, splitIndexFile } from '../../src/memory/index-block.js';
import { TOPIC_FILES } from '../../src/memory/types.js';
import { loadMemory } from '../../src/space/index.js';
import { type ScriptedFact } from '../../harness/scripted-extractor.js';
import { snapshotDirectory } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { claudeCodeHome, type ClaudeCodeHome, HELLO_SCRIPT_FACT, HOOK_BAIL_OUT_FACT } from './helpers.js';

const MEMORY_FIXTURES = fileURLToPath(new URL('../fixtures/claude-code-memory/', import.meta.url));
const CLAUDE_CODE_READ_BYTES = 4_096;

const FACTS: readonly ScriptedFact[] = [
  HELLO_SCRIPT_FACT,
  {
    ...HOOK_BAIL_OUT_FACT,
    howToApply:
      'In cmd/entire/cli/hooks_claudecode_handlers.go, return the error from opening the repository.',
  },
  {
    trigger: 'surface to the user',
    type: 'feedback',
    title: 'Hook errors reach the user',
    body: 'A hook handler that fails shows the error to the user, as the active-session check does.',
    why: 'An error returned from a hook is otherwise never seen.',
    howToApply: 'Report it the way the active session check reports its failure.',
    description:
      'Error handling in hook handlers: show the failure to the user like the active-session check',
  },
  {
    trigger: 'color file inside docs',
    type: 'project',
    title: 'Docs colour file',
    body: 'docs/color.md holds the colour an agent picked for the docs.',
  },
  {
    // A fact near limits.maxFactChars: its file still stays under 4 KB.
    trigger: 'hello.sh',
    type: 'reference',
    title: 'Notes on the shell scripts',
    body: `Shell script notes: ${'hello.sh prints a greeting and exits with status zero. '.repeat(68)}`,
    description: 'Long notes on the repository shell scripts and their exit status',
  },
  // Enough facts that one topic file would be long: the index stays within its limits, fair across types.
  ...Array.from({ length: 24 }, (_, index): ScriptedFact => ({
    trigger: 'hello.sh',
    type: index % 2 === 0 ? 'user' : 'project',
    title: `Script convention ${index + 1}`,
    body: `Convention number ${index + 1} for the shell scripts of the repository.`,
    description: `Shell script convention ${index + 1}: how the repository writes its scripts`,
  })),
];

const fake = useFakeAnthropic({ facts: FACTS });

/** A Claude Code project whose memory folder starts as the `vintage` fixture folder. No `layout` in its space: a
 * claude-code space writes the claude-code layout by default. */
function claudeCodeSpace(vintage: 'current' | 'older'): ClaudeCodeHome {
  return claudeCodeHome(fake, { memoryFrom: join(MEMORY_FIXTURES, vintage) });
}

describe.each(['current', 'older'] as const)(
  'the %s Claude Code folder, consolidated in the claude-code layout',
  (vintage) => {
    it('writes one fact per file, under 4 KB, each linked once from MEMORY.md, and changes no byte of theirs', async () => {
      const { memoryDir, consolidate } = claudeCodeSpace(vintage);
      const before = snapshotDirectory(memoryDir);
      const summary = await consolidate();
      expect(summary.status).toBe('completed');
      const after = snapshotDirectory(memoryDir);

      // Every file dreamd did not create is byte for byte as it was; MEMORY.md outside dreamd's block too.
      const indexBefore = before.get('MEMORY.md') ?? '';
      const index = after.get('MEMORY.md') ?? '';
      const parts = splitIndexFile(index);
      expect(parts.kind).toBe('block');
      expect(`${parts.before}${parts.after}`).toBe(indexBefore);
      for (const [file, bytes] of before) if (file !== 'MEMORY.md') expect(after.get(file)).toBe(bytes);

      // Dreamd's state (.dreamd/) and Claude Code's lock (.consolidate-lock) are not memory files.
      const created = [...after.keys()].filter((file) => !before.has(file) && !file.startsWith('.'));
      const memory = await loadMemory(memoryDir);
      const active = memory.facts.filter((fact) => fact.owner !== 'other' && fact.status === 'active');
      // One file per active fact of dreamd's, no topic file, nothing else.
      expect(created.sort()).toEqual(active.map((fact) => fact.file).sort());
      expect(created.length).toBe(FACTS.length);
      for (const topic of Object.values(TOPIC_FILES)) expect(created).not.toContain(topic);
      for (const file of created) {
        const text = after.get(file) ?? '';
        expect(file).toMatch(/^(user|feedback|project|reference)_[a-z0-9_]+\.md$/);
        expect(Buffer.byteLength(text)).toBeLessThan(CLAUDE_CODE_READ_BYTES);
        // One fact: dreamd's metadata holds one id, and the body no second entry.
        expect(parseFactFile(text, file)?.fact.file).toBe(file);
        expect(text).not.toMatch(/^## /m);
        const { data } = readFrontmatter(text);
        expect(data.name).toEqual(expect.stringMatching(/\S/));
        expect(data.description).toEqual(expect.stringMatching(/\S/));
        expect(data.metadata?.type).toEqual(expect.stringMatching(/^(user|feedback|project|reference)$/));
        expect(parts.blockLines.filter((line) => line.includes(`](${file})`))).toHaveLength(1);
        expect(index.split('\n').filter((line) => line.includes(`](${file})`))).toHaveLength(1);
      }
      // Lines read `- [Title](file.md) — hook`, the hook the description the model wrote.
      const hello = active.find((fact) => fact.title === 'hello.sh prints Hello world');
      expect(parts.blockLines).toContain(
        `- [hello.sh prints Hello world](${hello?.file}) — The hello.sh shell script in the repo and what it prints (Hello world)`,
      );
      // Rule, Why, How to apply for feedback.
      const rule = active.find((fact) => fact.title === 'Hook errors reach the user');
      expect(after.get(rule?.file ?? '')).toContain(
        '\n**Why:** An error returned from a hook is otherwise never seen.\n',
      );
      expect(index.split('\n').length - 1).toBeLessThanOrEqual(INDEX_LIMITS.maxLines);
      expect(Buffer.byteLength(index)).toBeLessThanOrEqual(INDEX_LIMITS.maxBytes);
      for (const line of index.split('\n'))
        expect([...line].length).toBeLessThanOrEqual(INDEX_LIMITS.maxLineChars);

      // The agent's recall finds dreamd's one-fact files as facts (their ids), not as notes.
      const found = await createRecall({ memoryDir }).recall('hello.sh shell script prints', { limit: 3 });
      expect(found.map((result) => result.id)).toContain(hello?.id);
      expect(found.filter((result) => result.id.startsWith('note:'))).toEqual([]);

      // A second run finds nothing new and changes nothing.
      expect((await consolidate()).status).not.toBe('failed');
      const memoryFiles = (files: Map<string, string>) =>
        [...files].filter(([file]) => !file.startsWith('.dreamd/'));
      expect(memoryFiles(snapshotDirectory(memoryDir))).toEqual(memoryFiles(after));
    });
  },
);
