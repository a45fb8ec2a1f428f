import { describe, expect, it } from 'vitest';
import {
  citedFiles,
  collectReads,
  countFactReads,
  emptyFactUse,
  parseFactUse,
  serializeFactUse,
  summarizeFactUse,
} from '../../src/space/fact-use.js';
import { buildIndex } from '../../src/memory/memory-index.js';
import type { Fact } from '../../src/memory/types.js';
import type { Session, SessionMessage } from '../../src/transcripts/types.js';
import { fact as memoryFact } from '../memory/helpers.js';

const MEMORY = '/home/ana/.claude/projects/shop/memory';

function fact(id: string, type: Fact['type'], title: string, extra: Partial<Fact> = {}): Fact {
  const day = '2026-11-01';
  return memoryFact(
    { id, title, body: `${title}.`, observed: day, updated: day, sources: ['s1'], ...extra },
    type,
  );
}

const FACTS = [
  fact('f-user000001', 'user', 'Lives in Lisbon'),
  fact('f-user000002', 'user', 'Drinks no coffee after 4 pm'),
  fact('f-feed000001', 'feedback', 'Terse answers', { owner: 'other', file: 'feedback_terse.md' }),
  fact('f-proj000001', 'project', 'Release branch is release/2026.12', {
    owner: 'other',
    file: 'notes/release.md',
  }),
  fact('f-refe000001', 'reference', 'Tracker is Linear'),
];

function session(id: string, messages: readonly Omit<SessionMessage, 'index'>[]): Session {
  return {
    id,
    file: `/sessions/${id}.json`,
    format: 'native',
    startedAt: '2026-11-20T10:00:00Z',
    endedAt: undefined,
    agent: undefined,
    messages: messages.map((message, index) => ({ ...message, index })),
    messageCount: messages.length,
    warnings: [],
  };
}

const call = (name: string, input: unknown, id = `toolu_${name}`): SessionMessage['parts'][number] => ({
  kind: 'tool-call',
  id,
  name,
  input,
});

/** The reads of the FACTS counted on 2026-12-01: `reads` added to `use` (nothing counted yet, by default). */
function countOn(reads: readonly ReturnType<typeof collectReads>[], use = emptyFactUse()) {
  return countFactReads(use, reads, { facts: FACTS, day: '2026-12-01' });
}

describe('counting reads of memory from transcripts', () => {
  const reading = session('s-reads', [
    { role: 'user', ts: '2026-11-20T10:00:00Z', parts: [{ kind: 'text', text: 'where do I live?' }] },
    {
      role: 'assistant',
      ts: '2026-11-20T10:00:05Z',
      parts: [
        // Claude Code's Read of a topic file: each of its facts is read.
        call('Read', { file_path: `${MEMORY}/user.md` }),
        // Anthropic's memory tool.
        call('memory', { command: 'view', path: '/memories/feedback_terse.md' }),
        // dreamd's read_memory.
        call('read_memory', { path: 'notes/release.md' }),
        call('recall', { query: 'tracker' }, 'toolu_recall'),
        // Outside the memory folder, and a view of the folder itself: not reads of a fact.
        call('Read', { file_path: '/home/ana/code/shop/README.md' }),
        call('memory', { command: 'view', path: '/memories' }),
      ],
    },
    {
      role: 'user',
      ts: '2026-11-21T09:00:00Z',
      parts: [
        {
          kind: 'tool-result',
          toolCallId: 'toolu_recall',
          text: '[f-refe000001] 2026-11-01 (score 0.80) Tracker is Linear\n[f-unknown001] 2026-11-01 gone',
          isError: false,
        },
      ],
    },
  ]);

  it('counts each source of reads: Read, the memory tool, read_memory and recall', () => {
    const use = countOn([collectReads(reading, MEMORY)]);
    expect(use.facts).toEqual({
      'f-user000001': { reads: 1, lastRead: '2026-11-20' },
      'f-user000002': { reads: 1, lastRead: '2026-11-20' },
      'f-feed000001': { reads: 1, lastRead: '2026-11-20' },
      'f-proj000001': { reads: 1, lastRead: '2026-11-20' },
      'f-refe000001': { reads: 1, lastRead: '2026-11-21' },
    });
    expect(use.counted).toEqual({ 's-reads': 3 });
    expect(summarizeFactUse(FACTS, use)).toEqual({ used: 5, neverUsed: 0 });
  });

  it('never counts a message twice, and counts what a session adds later', () => {
    const reads = collectReads(reading, MEMORY);
    const once = countOn([reads]);
    const again = countOn([reads], once);
    expect(again).toEqual(once);
    const grown = session('s-reads', [
      ...reading.messages,
      { role: 'assistant', ts: undefined, parts: [call('Read', { file_path: `${MEMORY}/reference.md` })] },
    ]);
    const later = countOn([collectReads(grown, MEMORY)], again);
    expect(later.facts['f-refe000001']).toEqual({ reads: 2, lastRead: '2026-12-01' });
    expect(later.facts['f-user000001']).toEqual({ reads: 1, lastRead: '2026-11-20' });
  });

  it('keeps the state file round-trip stable and rebuilds from nothing when it is unreadable', () => {
    const use = countOn([collectReads(reading, MEMORY)]);
    expect(parseFactUse(serializeFactUse(use))).toEqual(use);
    expect(parseFactUse('{ not json')).toEqual(emptyFactUse());
    expect(parseFactUse(null)).toEqual(emptyFactUse());
  });
});

describe('the index orders each type by use', () => {
  const users = Array.from({ length: 6 }, (_, index) =>
    fact(`f-user00000${index}`, 'user', `User fact ${index}`, {
      observed: `2026-11-0${index + 1}`,
      updated: `2026-11-0${index + 1}`,
    }),
  );

  it('gives the most read facts of a type the first lines, and leaves a type nobody read as it was', () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const plain = buildIndex(users, { now }).included;
    const read = buildIndex(users, {
      now,
      use: {
        'f-user000000': { reads: 9, lastRead: '2026-11-30' },
        'f-user000002': { reads: 3, lastRead: '2026-11-29' },
      },
    }).included;
    expect(read[0]).toBe('f-user000000');
    expect(read.indexOf('f-user000002')).toBeLessThan(plain.indexOf('f-user000002') + 1);
    expect([...read].sort()).toEqual([...plain].sort()); // nothing dropped for being unread
    expect(buildIndex(users, { now, use: {} }).included).toEqual(plain);
  });
});

describe("counting Claude Code's <cc-memory> citations as uses", () => {
  it('counts each file a citation of the assistant names, once a message, beside the reads', () => {
    const citing = session('s-cites', [
      {
        role: 'assistant',
        ts: '2026-11-22T10:00:00Z',
        parts: [
          {
            kind: 'text',
            text:
              '<cc-memory filenames="feedback_terse.md, notes/release.md">I keep it short and ship from release/2026.12.</cc-memory> ' +
              '<cc-memory filenames="feedback_terse.md">Short again.</cc-memory>',
          },
        ],
      },
      // A person quoting the tag, names outside the folder or not Markdown, an unclosed list: not uses.
      {
        role: 'user',
        ts: '2026-11-22T10:01:00Z',
        parts: [{ kind: 'text', text: '<cc-memory filenames="user.md">x</cc-memory>' }],
      },
      {
        role: 'assistant',
        ts: '2026-11-22T10:02:00Z',
        parts: [
          {
            kind: 'text',
            text: '<cc-memory filenames="../secrets.md,/etc/passwd,notes.txt">no</cc-memory> <cc-memory filenames="user.md',
          },
        ],
      },
    ]);
    const use = countOn([collectReads(citing, MEMORY)]);
    expect(use.facts).toEqual({
      'f-feed000001': { reads: 1, lastRead: '2026-11-22' },
      'f-proj000001': { reads: 1, lastRead: '2026-11-22' },
    });
  });

  it('reads names relative to the memory folder, or absolute inside it', () => {
    expect(
      citedFiles(`<cc-memory filenames="${MEMORY}/user.md,./feedback_terse.md">s</cc-memory>`, MEMORY),
    ).toEqual(['user.md', 'feedback_terse.md']);
    expect(citedFiles('<cc-memory filenames="">s</cc-memory> no tag here', MEMORY)).toEqual([]);
  });
});
