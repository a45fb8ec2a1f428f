/**
 * The `claude-code` layout's file (one fact, as Claude Code writes its memories) and the layouts table.
 */
import { describe, expect, it } from 'vitest';
import { MemoryLayout } from '../../src/config/schema.js';
import { parseMemoryFile } from '../../src/memory/claude-code-file.js';
import {
  MAX_FACT_FILE_BYTES,
  factFileName,
  parseFactFile,
  renderFactFile,
  slugOf,
} from '../../src/memory/fact-file.js';
import { LAYOUTS } from '../../src/memory/layouts.js';
import {
  createEmptyTopic,
  parseTopicFile,
  renderTopicFile,
  topicFacts,
} from '../../src/memory/topic-file.js';
import { fact } from './helpers.js';

const RULE = fact(
  {
    id: 'f-7k2m9q4x1z',
    title: 'Run the integration tests against a real Redis',
    body: 'Integration tests hit a real Redis, never a mock.',
    why: 'A mocked queue hid a broken migration last quarter.',
    howToApply: 'Start redis-server in the global setup of the tests.',
    description: 'Testing rule: integration tests use a real Redis server, never a mock',
    sources: ['session-a', 'session-b'],
    observed: '2026-11-02',
    updated: '2026-11-20',
  },
  'feedback',
);

describe('a fact file', () => {
  it('reads back the fact it was written from, ids, sources and dates kept, as Claude Code reads it too', () => {
    const { text, cut } = renderFactFile(RULE);
    expect(cut).toEqual([]);
    expect(text).toMatch(
      /^---\nname: Run the integration tests against a real Redis\ndescription: "Testing rule: /,
    );
    expect(text).toContain('metadata:\n  type: feedback\n  modified: 2026-11-20\n');
    expect(text).toContain(
      '\n\nIntegration tests hit a real Redis, never a mock.\n\n**Why:** A mocked queue',
    );
    const read = parseFactFile(text, 'feedback_x.md');
    expect(read?.fact).toEqual({ ...RULE, file: 'feedback_x.md' });
    // Claude Code's own reader (and dreamd's for files of others) sees the same name, description and type.
    const asClaudeCode = parseMemoryFile(text, {
      relative: 'feedback_x.md',
      modified: '2026-12-01',
      owner: 'other',
    });
    expect(asClaudeCode.warnings).toEqual([]);
    expect(asClaudeCode.fact).toMatchObject({
      type: 'feedback',
      title: RULE.title,
      description: RULE.description,
      body: RULE.body,
      why: RULE.why,
      howToApply: RULE.howToApply,
    });
  });

  it("is not dreamd's without its metadata: a Claude Code memory is left to its owner", () => {
    const claudeCode =
      '---\nname: Terse\ndescription: short answers\nmetadata:\n  type: user\n---\n\nBe brief.\n';
    expect(parseFactFile(claudeCode, 'user_terse.md')).toBeUndefined();
    expect(parseFactFile('Just a note.\n', 'note.md')).toBeUndefined();
  });

  it('reads the type from the older top-level `type` too', () => {
    const { text } = renderFactFile(RULE);
    const older = text
      .replace('  type: feedback\n', '')
      .replace('metadata:\n', 'type: Feedback\nmetadata:\n');
    expect(older).not.toContain('  type: feedback');
    expect(parseFactFile(older, 'feedback_x.md')?.fact).toMatchObject({ id: RULE.id, type: 'feedback' });
  });

  it('marks a file a person edited, and a rewrite keeps its name, description and text byte for byte', () => {
    const { text } = renderFactFile(RULE);
    const edited = text
      .replace(
        'Integration tests hit a real Redis, never a mock.',
        'Integration tests hit real Redis 7.4, never a mock.',
      )
      .replace('description: "Testing rule', 'description: "My testing rule');
    const read = parseFactFile(edited, 'feedback_x.md');
    expect(read?.fact.editedByHand).toBe(true);
    const again = renderFactFile({ ...RULE, sources: [...RULE.sources, 'session-c'] }, read);
    expect(again.text).toContain('Integration tests hit real Redis 7.4, never a mock.');
    expect(again.text).toContain('description: "My testing rule');
    expect(again.text).toContain('hand: true');
    expect(parseFactFile(again.text, 'feedback_x.md')?.fact).toMatchObject({
      editedByHand: true,
      sources: ['session-a', 'session-b', 'session-c'],
    });
  });

  it(`stays under ${MAX_FACT_FILE_BYTES} bytes, whatever the fact, and says what it cut`, () => {
    const long = fact(
      {
        id: 'f-aaaaaaaaaa',
        body: 'é'.repeat(3_000),
        why: 'why '.repeat(300),
        sources: Array.from(
          { length: 40 },
          (_, index) => `2f6c1a52-1111-4c2b-9d0e-${String(index).padStart(12, '0')}`,
        ),
      },
      'project',
    );
    const { text, cut } = renderFactFile(long);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_FACT_FILE_BYTES);
    expect(cut).toEqual(expect.arrayContaining(['35 older source(s)']));
    expect(parseFactFile(text, 'project_x.md')?.fact.sources).toHaveLength(5);
  });
});

describe('a fact file name', () => {
  it('is the type, then a short slug of the title, as Claude Code names its memories', () => {
    expect(slugOf('Run the integration tests against a real Redis')).toBe(
      'run_the_integration_tests_against_a_real',
    );
    expect(slugOf('Café à Lisboa: the usual order')).toBe('cafe_a_lisboa_the_usual_order');
    expect(factFileName(RULE, () => false)).toBe('feedback_run_the_integration_tests_against_a_real.md');
  });

  it('never takes a name already in the folder', () => {
    const taken = new Set(['feedback_run_the_integration_tests_against_a_real.md']);
    expect(factFileName(RULE, (name) => taken.has(name))).toBe(
      'feedback_run_the_integration_tests_against_a_real_7k2m.md',
    );
    expect(factFileName({ ...RULE, title: '!!!' }, () => false)).toBe('feedback_7k2m9q4x1z.md');
  });
});

describe('a topic entry (the topics layout)', () => {
  it('keeps the description in its metadata, so the index line reads the same after a reload', () => {
    const text = renderTopicFile(createEmptyTopic('feedback'), [RULE]);
    expect(text).toContain(
      '"description":"Testing rule: integration tests use a real Redis server, never a mock"',
    );
    const [read] = topicFacts(parseTopicFile(text, 'feedback.md'));
    expect(read?.description).toBe(RULE.description);
    expect(read?.editedByHand).toBe(false);
  });
});

describe('the layouts table', () => {
  it('has an entry for every layout a space can name', () => {
    expect(Object.keys(LAYOUTS).sort()).toEqual([...MemoryLayout.options].sort());
  });
});
