import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSessionPassages } from '../../src/agent/session-passages.js';
import {
  createRecall,
  dateWords,
  QUERY_DATE_BONUS,
  RECALL_FIELD_WEIGHTS,
  searchDocuments,
  withPassages,
  type RecallDocument,
} from '../../src/agent/recall.js';
import { createBm25Index, createFieldedBm25Index } from '../../src/search/bm25.js';
import { inDayRanges, queryDayRanges, splitQueryDates } from '../../src/search/query-dates.js';
import { createTempDir, makeFolder } from '../support/fixtures.js';
import { recallFact, writeUserSession } from './helpers.js';

function doc(id: string, title: string, text: string, extra: Partial<RecallDocument> = {}): RecallDocument {
  return { id, title, text, date: '2026-03-10', ...extra };
}

const fact = recallFact('2026-03-10');

const NOW = new Date('2026-03-20T12:00:00Z');

describe('BM25F over weighted fields', () => {
  it('with one field of weight 1 scores as plain BM25', () => {
    const texts = ['spicy food', 'docker deploy', 'spicy', 'the deploy of spicy food with docker'];
    const plain = createBm25Index(texts).score('spicy docker');
    const fielded = createFieldedBm25Index(texts.map((text) => [{ text, weight: 1 }])).score('spicy docker');
    fielded.forEach((score, i) => expect(score).toBeCloseTo(plain[i]!, 10));
  });

  it('counts a word in a heavier field more, and stays within 0..1', () => {
    const index = createFieldedBm25Index([
      [
        { text: 'Lisbon', weight: 2 },
        { text: 'a trip to the coast', weight: 1 },
      ],
      [
        { text: 'Coast trip', weight: 2 },
        { text: 'a flat in Lisbon', weight: 1 },
      ],
    ]);
    const [inTitle, inBody] = index.score('Lisbon');
    expect(inTitle).toBeGreaterThan(inBody!);
    for (const score of index.score('Lisbon coast trip flat')) {
      expect(score).toBeGreaterThan(0);
      expect(score).toBeLessThanOrEqual(1);
    }
  });
});

describe('recall ranking rules', () => {
  it('weights the title twice the body', () => {
    expect(RECALL_FIELD_WEIGHTS.title).toBe(2 * RECALL_FIELD_WEIGHTS.text);
    const results = searchDocuments(
      [
        doc('f-body000001', 'Weekend plans', 'Ana will visit Porto with her sister.'),
        doc('f-title00001', 'Porto flat', 'Ana rented a flat near the river.'),
      ],
      'Porto',
      { now: NOW },
    );
    expect(results.map((result) => result.id)).toEqual(['f-title00001', 'f-body000001']);
  });

  it("searches a fact's type: a query about the project prefers project facts", async () => {
    const recall = createRecall({
      facts: [
        fact('f-user000001', 'Deadline stress', 'Ana worries about the deadline.'),
        fact('f-proj000001', 'Deadline moved', 'The deadline moved to Friday.', { type: 'project' }),
      ],
    });
    const results = await recall.recall('project deadline', { now: NOW });
    expect(results[0]?.id).toBe('f-proj000001');
  });

  it('never finds a fact by its type or date alone: they refine what the title and body found', () => {
    const results = searchDocuments(
      [doc('f-proj000001', 'Release train', 'Deploys go out on Thursdays.', { type: 'project' })],
      'where does this folder keep the project notes',
      { now: NOW },
    );
    expect(results).toEqual([]);
    const index = createFieldedBm25Index(
      ['project', 'user'].map((type) => [
        { text: 'Release train', weight: 1 },
        { text: type, weight: 0.5, refinesOnly: true },
      ]),
    );
    expect(index.score('project')).toEqual([0, 0]);
    const [project, user] = index.score('release project');
    expect(project).toBeGreaterThan(user!);
    expect(user).toBeGreaterThan(0);
  });

  it("searches a fact's date in words: the month of a query finds the fact of that month", () => {
    expect(dateWords('2026-03-14')).toBe('2026-03-14 March 2026');
    expect(dateWords('')).toBe('');
    const results = searchDocuments(
      [
        doc('f-feb0000001', 'Dentist', 'Ana went to the dentist.', { date: '2025-02-10' }),
        doc('f-oct0000001', 'Dentist', 'Ana went to the dentist.', { date: '2025-10-10' }),
      ],
      'dentist October 2025',
      { now: NOW },
    );
    expect(results[0]?.id).toBe('f-oct0000001');
  });

  it('breaks ties by recency: the newer of two equal matches first', () => {
    const results = searchDocuments(
      [
        doc('f-older00001', 'Guitar', 'Ana plays the guitar.', { date: '2026-01-02' }),
        doc('f-newer00001', 'Guitar', 'Ana plays the guitar.', { date: '2026-02-02' }),
      ],
      'guitar',
      { now: NOW },
    );
    expect(results.map((result) => result.id)).toEqual(['f-newer00001', 'f-older00001']);
  });
});

describe("the query's dates", () => {
  it('reads days, weeks, months and years against the moment of the search', () => {
    expect(queryDayRanges('what did I do yesterday?', NOW)).toEqual([
      { from: '2026-03-19', to: '2026-03-19' },
    ]);
    expect(queryDayRanges('what happened last week', NOW)).toEqual([
      { from: '2026-03-08', to: '2026-03-14' },
    ]);
    expect(queryDayRanges('decisions in March', NOW)).toEqual([{ from: '2026-03-01', to: '2026-03-31' }]);
    expect(queryDayRanges('last month', NOW)).toEqual([{ from: '2026-02-01', to: '2026-02-28' }]);
    expect(queryDayRanges('what did we ship in 2025', NOW)).toEqual([
      { from: '2025-01-01', to: '2025-12-31' },
    ]);
    expect(queryDayRanges('on 2026-03-14', NOW)).toEqual([{ from: '2026-03-14', to: '2026-03-14' }]);
    expect(queryDayRanges('Where does Ana work?', NOW)).toEqual([]);
  });

  it('searches the words of the query without its date expression, unless it is only a date', () => {
    expect(splitQueryDates('what did we decide about the standup last week?', NOW)).toEqual({
      ranges: [{ from: '2026-03-08', to: '2026-03-14' }],
      words: 'what did we decide about the standup ?',
    });
    expect(splitQueryDates('decisions in March', NOW).words).toBe('decisions');
    expect(splitQueryDates('yesterday', NOW).words).toBe('yesterday');
    expect(splitQueryDates('Where does Ana work?', NOW)).toEqual({
      ranges: [],
      words: 'Where does Ana work?',
    });
  });

  it('matches a fact by its date or by a day its text names', () => {
    const march = [{ from: '2026-03-01', to: '2026-03-31' }];
    expect(inDayRanges(march, '2026-03-05', 'anything')).toBe(true);
    expect(inDayRanges(march, '2026-04-05', 'Ana ran a half marathon on 2026-03-14.')).toBe(true);
    expect(inDayRanges(march, '2026-04-05', 'Ana ran a half marathon.')).toBe(false);
    expect(inDayRanges([], '2026-03-05', '')).toBe(false);
  });

  it("lifts the facts of the query's days above equal matches of other days", () => {
    const documents = [
      doc('f-newer00001', 'Standup', 'The team agreed to move the standup.', { date: '2026-03-18' }),
      doc('f-lastweek01', 'Standup', 'The team agreed to move the standup.', { date: '2026-03-11' }),
    ];
    const plain = searchDocuments(documents, 'standup', { now: NOW });
    expect(plain[0]?.id).toBe('f-newer00001');
    const dated = searchDocuments(documents, 'standup last week', { now: NOW });
    expect(dated[0]?.id).toBe('f-lastweek01');
    expect(dated[0]!.score - dated[1]!.score).toBeCloseTo(QUERY_DATE_BONUS, 5);
  });
});

describe('the hybrid: facts searched with the passages they came from', () => {
  it('aligns each fact with the message of its sessions that shares most with it', () => {
    const passages = new Map([
      ['s1', ['Hey, how are you?', "My cousin Bia is visiting from Lisbon next month, can't wait.", 'Bye!']],
      ['s2', ['We adopted a cat, Luna.']],
    ]);
    const [cousin, cat, note] = withPassages(
      [
        doc('f-cousin0001', "Ana's cousin", "Ana's cousin Bia lives in Lisbon.", { sources: ['s1'] }),
        doc('f-cat0000001', 'Cat', 'Ana has a cat named Luna.', { sources: ['s2', 'missing'] }),
        doc('note:x.md', 'A note', 'No sources.'),
      ],
      passages,
    );
    expect(cousin?.passage).toBe("My cousin Bia is visiting from Lisbon next month, can't wait.");
    expect(cat?.passage).toBe('We adopted a cat, Luna.');
    expect(note?.passage).toBeUndefined();
  });

  it('finds a fact worded like memory for a question worded like the conversation', async () => {
    const dir = await createTempDir('passages');
    try {
      const sessionsDir = await makeFolder(dir.path, 'sessions');
      await writeUserSession(sessionsDir, 's1', [
        'My cousin Bia is visiting from Lisbon next month.',
        'I adopted a cat called Luna.',
      ]);
      const passages = createSessionPassages({ sessionsDir, format: 'native', maxBytes: 1_000_000 });
      const byId = await passages();
      expect(byId.get('s1')).toEqual([
        'My cousin Bia is visiting from Lisbon next month.',
        'I adopted a cat called Luna.',
      ]);
      const facts = [
        fact('f-cousin0001', 'Cousin in Lisbon', "Ana's cousin Bia lives in Lisbon.", { sources: ['s1'] }),
        fact('f-cat0000001', 'Cat', 'Ana has a cat named Luna.', { sources: ['s1'] }),
      ];
      const question = 'Who is visiting next month?';
      expect(await createRecall({ facts }).recall(question, { now: NOW })).toEqual([]);
      const found = await createRecall({ facts, passages }).recall(question, { now: NOW });
      expect(found.map((result) => result.id)).toEqual(['f-cousin0001']);
      // A broken transcript beside it has no passages and stops nothing.
      await writeFile(path.join(sessionsDir, 'broken.json'), '{ not json');
      expect((await passages()).get('s1')).toHaveLength(2);
    } finally {
      await dir.remove();
    }
  });
});
