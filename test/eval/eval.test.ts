import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  Dataset,
  parseSessionDate,
  referenceFacts,
  sessionsOf,
  type Conversation,
} from '../../eval/format.js';
import { runEval } from '../../eval/harness.js';
import { renderReport } from '../../eval/run.js';

function tiny(secondTurn: string): Conversation {
  return Dataset.parse([
    {
      sample_id: 'tiny',
      conversation: {
        speaker_a: 'Ana',
        speaker_b: 'Rui',
        session_1_date_time: '9:00 am on 2 March, 2026',
        session_1: [
          { speaker: 'Ana', dia_id: 'D1:1', text: 'I work at a bakery on Rua Augusta.' },
          { speaker: 'Rui', dia_id: 'D1:2', text: secondTurn },
        ],
        session_2_date_time: '2026-04-20T18:30:00Z',
        session_2: [
          { speaker: 'Ana', dia_id: 'D2:1', text: 'I left the bakery, now I work at a café in Alfama.' },
        ],
      },
      observation: {
        session_1_observation: {
          Ana: [['Ana works at a bakery on Rua Augusta.', 'D1:1']],
          Rui: [['Rui keeps bees on his roof in Porto.', 'D1:2']],
        },
        session_2_observation: { Ana: [['Ana works at a café in Alfama.', 'D2:1']] },
      },
      qa: [{ question: 'Where does Ana work?', answer: 'café', evidence: ['D2:1'], category: 'update' }],
      dreamd_updates: [['D1:1', 'D2:1']],
    },
  ])[0]!;
}

describe('npm run eval', () => {
  it('reads LoCoMo-style dates, sessions and reference facts', () => {
    const conversation = tiny('I keep bees on my roof in Porto.');
    expect(parseSessionDate('6:30 pm on 20 April, 2026')).toBe('2026-04-20T18:30:00.000Z');
    expect(sessionsOf(conversation).map((session) => session.id)).toEqual(['tiny-s1', 'tiny-s2']);
    expect(
      referenceFacts(conversation)
        .map((fact) => fact.turn)
        .sort(),
    ).toEqual(['D1:1', 'D1:2', 'D2:1']);
  });

  it('in oracle mode keeps every fact once and resolves the planted update to the newest', async () => {
    const report = await runEval([tiny('I keep bees on my roof in Porto.')], { mode: 'oracle' });
    expect(report.totals).toMatchObject({
      referenceFacts: 3,
      keptOnce: 3,
      lost: 0,
      wronglyMerged: 0,
      wronglySuperseded: 0,
      updates: 1,
      updatesResolved: 1,
    });
    expect(report.totals.recall.all!.dreamd['@10']).toBe(1);
    expect(report.totals.tokensPerSession).toBeGreaterThan(0);
    expect(report.totals.costPerSessionUsd).toBeGreaterThan(0);
    expect(renderReport(report)).toContain('| reference facts kept once | 3 of 3 |');
  });

  it('counts a fact whose turn never reached the model as lost', async () => {
    // A 36,000-character paste is cut in its middle by the digest: the oracle never sees that turn.
    const paste = `${'log line '.repeat(2000)}I keep bees on my roof in Porto. ${'log line '.repeat(2000)}`;
    const report = await runEval([tiny(paste)], { mode: 'oracle', tokensPerCall: 24_000 });
    expect(report.totals.lost).toBe(1);
    expect(report.totals.keptOnce).toBe(2);
  });

  it('ships a dataset with people alike, three updates of one fact, and Portuguese and Spanish sessions', () => {
    const dataset = Dataset.parse(
      JSON.parse(readFileSync(new URL('../../eval/dataset/dreamd-small.json', import.meta.url), 'utf8')),
    );
    expect(dataset.map((conversation) => conversation.sample_id)).toEqual([
      'dreamd-friends-en',
      'dreamd-amigos-pt',
      'dreamd-amigos-es',
    ]);
    expect(dataset[0]!.dreamd_updates.length).toBeGreaterThanOrEqual(3);
    expect(Object.keys(dataset[0]!.dreamd_dates).length).toBeGreaterThan(5);
  });
});
