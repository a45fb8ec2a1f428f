/**
 * Facts people had to teach again: the record's round trip through both file formats, and its place first in
 * its section of `MEMORY.md` and of the `AGENTS.md` block, with words that say it is a repeated correction.
 */
import { describe, expect, it } from 'vitest';
import { renderAgentsFile } from '../../src/memory/agents-block.js';
import { parseFactFile, renderFactFile } from '../../src/memory/fact-file.js';
import { buildIndex } from '../../src/memory/memory-index.js';
import {
  MAX_TAUGHT_AGAIN_SESSIONS,
  addTaughtAgain,
  joinTaughtAgain,
  mostTaughtAgain,
  taughtAgainFirst,
  timesTaughtAgain,
} from '../../src/memory/taught-again.js';
import {
  createEmptyTopic,
  parseTopicFile,
  renderTopicFile,
  topicFacts,
} from '../../src/memory/topic-file.js';
import type { Fact } from '../../src/memory/types.js';
import { fact } from './helpers.js';

const AGAIN = { count: 3, last: '2026-11-25', sessions: ['s-2', 's-3', 's-4'] };
const RULE = fact(
  {
    id: 'f-7k2m9q4x1z',
    title: 'Squash commits before merging',
    body: 'Squash the branch into one commit before it is merged.',
    why: 'The history stays readable.',
    howToApply: 'Run git rebase -i before asking for review.',
    sources: ['s-1', 's-2', 's-3', 's-4'],
    observed: '2026-11-02',
    updated: '2026-11-25',
    taughtAgain: AGAIN,
  },
  'feedback',
);
/** Feedback facts never taught again, each more recent and better established than the rule. */
const OTHERS = ['a', 'b', 'c', 'd'].map((letter) =>
  fact(
    {
      id: `f-other0000${letter}`,
      title: `Rule ${letter}`,
      body: `Rule ${letter} says something.`,
      sources: ['s-5', 's-6', 's-7', 's-8', 's-9'],
      updated: '2026-11-29',
    },
    'feedback',
  ),
);
const NOW = new Date('2026-11-30T12:00:00Z');

describe('the record of a fact taught again', () => {
  it('counts each session once, keeps the latest date and the latest ten sessions', () => {
    const once = addTaughtAgain(undefined, ['s-2'], '2026-11-10');
    expect(once).toEqual({ count: 1, last: '2026-11-10', sessions: ['s-2'] });
    expect(addTaughtAgain(once, ['s-2'], '2026-11-12')).toEqual({ ...once, last: '2026-11-12' });
    const many = Array.from({ length: 14 }, (_, index) => `s-${index + 10}`);
    const record = addTaughtAgain(once, many, '2026-11-09');
    expect(record.count).toBe(15);
    expect(record.last).toBe('2026-11-10');
    expect(record.sessions).toHaveLength(MAX_TAUGHT_AGAIN_SESSIONS);
    expect(record.sessions.at(-1)).toBe('s-23');
    expect(joinTaughtAgain(once, AGAIN)).toEqual({
      count: 4,
      last: '2026-11-25',
      sessions: ['s-2', 's-3', 's-4'],
    });
    expect(timesTaughtAgain(fact({ id: 'f-0000000000' }))).toBe(0);
  });

  it('survives a topic file round trip', () => {
    const text = renderTopicFile(createEmptyTopic('feedback'), [RULE]);
    expect(text).toContain('"taughtAgain":{"count":3,"last":"2026-11-25","sessions":["s-2","s-3","s-4"]}');
    const [read] = topicFacts(parseTopicFile(text, 'feedback.md'));
    expect(read).toEqual(RULE);
  });

  it('survives a fact file round trip, and the description says it is a repeated correction', () => {
    const { text } = renderFactFile(RULE);
    expect(text).toContain(
      'description: "Repeated correction (taught again 3×): Squash the branch into one commit before it is merged."',
    );
    expect(text).toContain('  taughtAgain:\n    count: 3\n    last: 2026-11-25\n');
    const read = parseFactFile(text, 'feedback_squash.md');
    expect(read?.fact.editedByHand).toBe(false);
    expect(read?.fact.taughtAgain).toEqual(AGAIN);
    // Read back without the note, so the next write does not say it twice.
    expect(read?.fact.description).toBe('Squash the branch into one commit before it is merged.');
    expect(
      renderFactFile({ ...RULE, ...(read === undefined ? {} : { description: read.fact.description }) }).text,
    ).toBe(text);
  });

  it('a malformed record is dropped and the rest of the fact reads as before', () => {
    const text = renderTopicFile(createEmptyTopic('feedback'), [RULE]).replace('"count":3', '"count":"many"');
    const [read] = topicFacts(parseTopicFile(text, 'feedback.md'));
    expect(read?.taughtAgain).toBeUndefined();
    expect(read?.body).toBe(RULE.body);
    expect(read?.editedByHand).toBe(false);
  });
});

describe('a fact taught again comes first', () => {
  it("heads its section of MEMORY.md, its line saying it was taught again, whatever the others' dates", () => {
    const index = buildIndex([...OTHERS, RULE], { now: NOW });
    const lines = index.text.split('\n').filter((line) => line.startsWith('- ['));
    // Cut at the index's 150 characters a line, the note first.
    expect(lines[0]).toMatch(
      /^- \[Squash commits before merging\]\(feedback\.md#f-7k2m9q4x1z\) — Repeated correction \(taught again 3×\): Squash the branch/,
    );
    expect(index.included[0]).toBe(RULE.id);
  });

  it('is listed when the index has room for one line of its type only', () => {
    const crowd = Array.from({ length: 400 }, (_, number) =>
      fact(
        { id: `f-${String(number).padStart(10, '0')}`, updated: '2026-11-29', sources: ['a', 'b', 'c'] },
        'feedback',
      ),
    );
    const index = buildIndex([...crowd, RULE], { now: NOW });
    expect(index.omitted.length).toBeGreaterThan(0);
    expect(index.included[0]).toBe(RULE.id);
  });

  it('orders facts taught again by how many times, then by the last time; the others keep their order', () => {
    const twice = {
      ...RULE,
      id: 'f-twice00000',
      taughtAgain: { count: 2, last: '2026-11-28', sessions: [] },
    };
    const twiceEarlier = {
      ...twice,
      id: 'f-twice00001',
      taughtAgain: { ...twice.taughtAgain, last: '2026-11-01' },
    };
    const [first, second] = OTHERS as [Fact, Fact];
    const order = taughtAgainFirst<Fact>([first, twiceEarlier, second, twice, RULE]).map((item) => item.id);
    expect(order).toEqual([RULE.id, twice.id, twiceEarlier.id, first.id, second.id]);
  });

  it('heads the AGENTS.md block, saying it is a repeated correction', () => {
    const project = fact(
      { id: 'f-project000', title: 'Uses Postgres', body: 'The service runs on Postgres.' },
      'project',
    );
    const block = renderAgentsFile([...OTHERS, project, RULE], { existing: null, file: '/repo/AGENTS.md' });
    expect(block.included[0]).toBe(RULE.id);
    const lines = (block.text ?? '').split('\n').filter((line) => line.startsWith('- '));
    expect(lines[0]).toBe(
      `- **Squash commits before merging** (repeated correction, taught again 3×): Squash the branch into one commit before it is merged. (Run git rebase -i before asking for review.) <!-- dreamd ${RULE.id} ${RULE.updated} -->`,
    );
  });
});

describe('the rules your agents keep forgetting (status)', () => {
  it('lists the active facts taught again, most times first, rules first on a tie, at most five', () => {
    const again = (id: string, type: Fact['type'], count: number, last = '2026-11-20') =>
      fact({ id, title: id, taughtAgain: { count, last, sessions: [] } }, type);
    const facts = [
      again('f-user000002', 'user', 2),
      again('f-feed000002', 'feedback', 2),
      again('f-feed000005', 'feedback', 5),
      { ...again('f-gone000009', 'feedback', 9), status: 'superseded' as const },
      again('f-proj000001', 'project', 1),
      again('f-feed000001', 'feedback', 1, '2026-11-25'),
      again('f-refe000001', 'reference', 1, '2026-11-01'),
      fact({ id: 'f-never00000' }, 'feedback'),
    ];
    expect(mostTaughtAgain(facts).map((rule) => [rule.id, rule.count])).toEqual([
      ['f-feed000005', 5],
      ['f-feed000002', 2],
      ['f-user000002', 2],
      ['f-feed000001', 1],
      ['f-proj000001', 1],
    ]);
    expect(mostTaughtAgain([fact({ id: 'f-never00000' })])).toEqual([]);
  });
});
