import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  Dataset,
  parseSessionDate,
  referenceFacts,
  sessionsOf,
  type Conversation,
} from '../../eval/format.js';
import { generateLongDataset, LONG_SIZES } from '../../eval/generate.js';
import { ORACLE_PRICED_AS, runEval, runEvalBothWays } from '../../eval/harness.js';
import {
  duplicateFigures,
  FAR_BACK_FACTS,
  isFarBack,
  isReworded,
  learnedOrder,
  ruleFigures,
} from '../../eval/plant-figures.js';
import { renderBothWays, renderReport } from '../../eval/run.js';
import { verdicts } from '../../eval/verdict.js';
import { PRICE_TABLE } from '../../src/cost/prices.js';

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

/**
 * `tiny` of Rui's bees, with Rui saying `text` as turn D2:2 of its second session, and the fields `more` gives
 * (from that conversation) over it.
 */
function beesWithTurn(
  text: string,
  more: (conversation: Conversation) => Record<string, unknown>,
): Conversation {
  const conversation = tiny('I keep bees on my roof in Porto.');
  return Dataset.parse([
    {
      ...conversation,
      conversation: {
        ...conversation.conversation,
        session_2: [
          ...(conversation.conversation.session_2 as unknown[]),
          { speaker: 'Rui', dia_id: 'D2:2', text },
        ],
      },
      ...more(conversation),
    },
  ])[0]!;
}

/** The kinds of question the generated long dataset asks, sorted: each has its row in the report. */
const QUESTION_KINDS = ['multi-hop', 'multilingual', 'single-hop', 'temporal', 'transcript-only', 'update'];

describe('the generated long dataset', () => {
  it('is the same for the same seed and size, and another for another seed', () => {
    const once = JSON.stringify(generateLongDataset('quick'));
    expect(JSON.stringify(generateLongDataset('quick'))).toBe(once);
    expect(JSON.stringify(generateLongDataset('quick', 7))).not.toBe(once);
  });

  it('at full size has hundreds of dated sessions over months, by circles of four people', () => {
    const dataset = generateLongDataset('full');
    // The circles, then Priya's profile, then the allotment register.
    expect(dataset.map((conversation) => conversation.sample_id)).toEqual([
      ...Array.from({ length: LONG_SIZES.full.conversations }, (_, index) => `dreamd-long-${index + 1}`),
      'dreamd-profile-1',
      'dreamd-garden-1',
    ]);
    const circles = dataset.slice(0, -2).flatMap((conversation) => sessionsOf(conversation));
    expect(circles.length).toBe(280);
    const sessions = dataset.flatMap((conversation) => sessionsOf(conversation));
    const days = sessions.map((session) => Date.parse(session.startedAt));
    expect((Math.max(...days) - Math.min(...days)) / 86_400_000).toBeGreaterThan(150);
    for (const conversation of dataset) {
      const speakers = new Set(sessionsOf(conversation).flatMap((s) => s.turns.map((turn) => turn.speaker)));
      // Circles and the register have four people; the profile is Priya telling Sam.
      expect(speakers.size).toBe(conversation.sample_id === 'dreamd-profile-1' ? 2 : 4);
    }
  });

  it('holds updates, relative dates, near-duplicates across people, other languages and five question kinds', () => {
    const [conversation] = generateLongDataset('quick');
    const facts = referenceFacts(conversation!);
    expect(conversation!.dreamd_updates.length).toBeGreaterThan(0);
    expect(Object.keys(conversation!.dreamd_dates).length).toBeGreaterThan(5);
    const categories = new Set(conversation!.qa.map((question) => question.category));
    expect([...categories].sort()).toEqual(QUESTION_KINDS);
    // Near-duplicates: the same kind of fact about two people ("X has a dog named …", "X lives in …").
    const shapes = facts.map((fact) => fact.text.replace(fact.speaker, '').replace(/named \S+|in .+$/, ''));
    expect(shapes.length - new Set(shapes).size).toBeGreaterThan(10);
    const turns = sessionsOf(conversation!).flatMap((session) => session.turns.map((turn) => turn.text));
    expect(turns.some((text) => /\b(?:moramos|vivimos|trabalho|trabajo)\b/.test(text))).toBe(true);
    // Every question names its evidence turns, and every evidence turn has a reference fact, but those of
    // the questions only a transcript answers: no fact holds their turn.
    const factTurns = new Set(facts.map((fact) => fact.turn));
    for (const question of conversation!.qa) {
      expect(question.evidence.length).toBeGreaterThan(0);
      for (const turn of question.evidence)
        expect(factTurns.has(turn)).toBe(question.category !== 'transcript-only');
    }
  });

  it('plants what breaks dreamd at quick size, one of each, and dozens at full size', () => {
    for (const size of ['quick', 'full'] as const) {
      const dataset = generateLongDataset(size);
      const least = size === 'quick' ? 1 : 24;
      let farBack = 0;
      let nearUpdates = 0;
      let sameSession = 0;
      let acrossSessions = 0;
      let monthsApart = 0;
      for (const conversation of dataset) {
        const facts = referenceFacts(conversation);
        const order = learnedOrder(facts);
        for (const [older, newer] of conversation.dreamd_updates) {
          if (isFarBack([older, newer], order)) farBack += 1;
          else nearUpdates += 1;
        }
        const sessionOf = new Map(facts.map((fact) => [fact.turn, fact]));
        const started = new Map(sessionsOf(conversation).map((session) => [session.id, session.startedAt]));
        for (const [first, second] of conversation.dreamd_duplicates) {
          const a = sessionOf.get(first)!;
          const b = sessionOf.get(second)!;
          // One fact in other words: two reference texts, one person.
          expect(a.text).not.toBe(b.text);
          expect(a.speaker).toBe(b.speaker);
          if (a.sessionId === b.sessionId) sameSession += 1;
          else acrossSessions += 1;
          const days =
            (Date.parse(started.get(b.sessionId)!) - Date.parse(started.get(a.sessionId)!)) / 86_400_000;
          if (days >= 60) monthsApart += 1;
        }
      }
      expect(farBack).toBeGreaterThanOrEqual(size === 'quick' ? 3 : 40);
      expect(nearUpdates).toBeGreaterThanOrEqual(least);
      expect(sameSession).toBeGreaterThanOrEqual(least === 1 ? 1 : 12);
      expect(acrossSessions).toBeGreaterThanOrEqual(least);
      if (size === 'full') expect(monthsApart).toBeGreaterThanOrEqual(5);
    }
    // Rules taught four times (wordings A, B, A, B, in four sessions in order), and rules taught once.
    for (const size of ['quick', 'full'] as const) {
      const garden = generateLongDataset(size).at(-1)!;
      const facts = new Map(referenceFacts(garden).map((fact) => [fact.turn, fact]));
      const again = garden.dreamd_rules.filter((group) => group.length === 4);
      const once = garden.dreamd_rules.filter((group) => group.length === 1);
      expect(again).toHaveLength(LONG_SIZES[size].garden.rulesTaughtAgain);
      expect(once).toHaveLength(LONG_SIZES[size].garden.rulesTaughtOnce);
      for (const group of again) {
        const taught = group.map((turn) => facts.get(turn)!);
        expect(new Set(taught.map((fact) => fact.text)).size).toBe(2);
        const sessions = taught.map((fact) => Number(/-s(\d+)$/.exec(fact.sessionId)?.[1]));
        expect([...sessions].sort((a, b) => a - b)).toEqual(sessions);
        expect(new Set(sessions).size).toBe(4);
      }
    }
    // Priya's profile: 100 facts about her before the changes at full size, changes that share only her name
    // with the older fact, and near-twin rules one word apart, each taught as a rule of its own.
    for (const size of ['quick', 'full'] as const) {
      const profile = generateLongDataset(size).find((c) => c.sample_id === 'dreamd-profile-1')!;
      const facts = referenceFacts(profile);
      const text = new Map(facts.map((fact) => [fact.turn, fact.text]));
      const changedAt = Math.min(
        ...profile.dreamd_updates.map(([, newer]) => Number(/^D(\d+):/.exec(newer)![1])),
      );
      const before = facts.filter(
        (fact) => fact.text.startsWith('Priya') && Number(/-s(\d+)$/.exec(fact.sessionId)![1]) < changedAt,
      );
      expect(before.length).toBeGreaterThanOrEqual(LONG_SIZES[size].profile.facts);
      if (size === 'full') expect(before.length).toBeGreaterThanOrEqual(100);
      expect(profile.dreamd_updates).toHaveLength(LONG_SIZES[size].profile.reworded);
      for (const pair of profile.dreamd_updates) expect(isReworded(pair, text)).toBe(true);
      expect(profile.dreamd_twins).toHaveLength(LONG_SIZES[size].profile.twins);
      const rules = new Set(profile.dreamd_rules.flat());
      for (const [a, b] of profile.dreamd_twins) {
        const [wordsA, wordsB] = [text.get(a)!, text.get(b)!].map((t) => t.split(' '));
        // One word apart: one word changed, or one more.
        const apart = [
          ...wordsA!.filter((word) => !wordsB!.includes(word)),
          ...wordsB!.filter((word) => !wordsA!.includes(word)),
        ];
        expect(apart.length).toBeGreaterThanOrEqual(1);
        expect(apart.length).toBeLessThanOrEqual(2);
        expect(rules.has(a) && rules.has(b)).toBe(true);
        expect(profile.dreamd_updates.flat()).not.toContain(a);
      }
    }
    // The register holds the 200 facts an update reaches back over, and far more than a memory list shows.
    const garden = generateLongDataset('quick').at(-1)!;
    expect(referenceFacts(garden).length).toBeGreaterThan(FAR_BACK_FACTS);
  });

  it('at quick size prints both ways side by side and a verdict per target, and docs/eval.md prints the recall as run', async () => {
    const dataset = generateLongDataset('quick');
    const both = await runEvalBothWays(dataset, { mode: 'oracle' });
    const sessions = dataset.reduce((total, conversation) => total + sessionsOf(conversation).length, 0);
    // One run per session, and the backlog: its first run reads many sessions, never one at a time.
    expect(both.perSession.totals.runs).toBe(sessions);
    expect(both.backlog.totals.runs).toBeLessThan(sessions / 4);
    for (const conversation of both.backlog.conversations)
      expect(conversation.sessionsInFirstRun).toBeGreaterThan(conversation.sessions / 2);
    const side = renderBothWays(both);
    expect(side).toContain(
      '| figure | one run per session | backlog (every session waiting for the first run) |',
    );
    for (const figure of [
      'facts dropped',
      'lost',
      'wrongly merged',
      'duplicates kept',
      'chains resolved to the newest',
      "older fact in the model's view",
      'recall hit@10, dreamd fused vs BM25 over raw turns',
      'recall tokens per query',
      'model calls',
      'near-twin rules both active',
      'near-twin rules merged or superseded across',
      'chains reworded (≤ 1 word shared) resolved to the newest',
      'extraction answers thrown away',
      'tokens',
      'dollars',
    ])
      expect(side).toMatch(
        new RegExp(`^\\| ${figure.replace(/[()]/g, '\\$&')}[^|]* \\| [^|]+ \\| [^|]+ \\|$`, 'm'),
      );
    for (const figure of [
      'rules taught again after saved (repeat-correction rate)',
      're-teachings counted (planted)',
      'rules taught ≥ 2 times in MEMORY.md',
    ])
      expect(side).toMatch(
        new RegExp(`^\\| ${figure.replace(/[()]/g, '\\$&')} \\| [^|]+ \\| [^|]+ \\|$`, 'm'),
      );
    // One run per session: every later teaching of a rule comes after the run that saved it and is counted;
    // the backlog's first run saves each rule from all its teachings at once: none came after it was saved.
    // The register's rules, that is: Priya's near-twin rules are the profile's to print (one counted as the
    // other taught again is a miss there).
    const garden = (report: typeof both.perSession) =>
      report.conversations.find((conversation) => conversation.id === 'dreamd-garden-1')!;
    expect(garden(both.perSession).reteachesCounted).toBe(garden(both.perSession).reteachesPlanted);
    expect(garden(both.perSession).rulesTaughtAgain).toBe(garden(both.perSession).rulesTaughtTwice);
    expect(garden(both.backlog).reteachesCounted).toBe(0);
    for (const target of [
      '0 dropped',
      '0 lost',
      '≥ 95 % of chains resolved to the newest',
      'recall hit@10',
      '100 % of rules taught ≥ 2 times in MEMORY.md',
    ])
      expect(side).toMatch(
        new RegExp(
          `^- ${target}.*: one run per session (?:MET|MISSED) \\(.+\\); backlog (?:MET|MISSED) \\(.+\\)$`,
          'm',
        ),
      );
    // The plants are counted: each duplicate pair, far-back chain, reworded change and near-twin pair, both ways.
    for (const report of [both.perSession, both.backlog]) {
      expect(report.totals.rewordedUpdates).toBe(LONG_SIZES.quick.profile.reworded);
      expect(report.totals.twinPairs).toBe(LONG_SIZES.quick.profile.twins);
      expect(report.totals.duplicatePairs).toBe(
        dataset.reduce((total, conversation) => total + conversation.dreamd_duplicates.length, 0),
      );
      expect(report.totals.farUpdates).toBeGreaterThanOrEqual(3);
      expect((report.totals.olderInView ?? 0) + (report.totals.olderOutOfView ?? 0)).toBeGreaterThan(0);
    }
    const report = both.perSession;
    const printed = renderReport(report);
    for (const category of [...QUESTION_KINDS, 'all'])
      expect(printed).toMatch(
        new RegExp(`^\\| ${category} \\| \\d+ \\| [\\d.]+ % / [\\d.]+ % / [\\d.]+ % \\|`, 'm'),
      );
    // Each miss is a line of the printout.
    for (const miss of report.misses.recall) expect(printed).toContain(`"${miss.question}"`);
    const docs = readFileSync(new URL('../../docs/eval.md', import.meta.url), 'utf8');
    const table = printed
      .split('\n')
      .filter((line) =>
        /^\| (?:multi-hop|multilingual|single-hop|temporal|transcript-only|update|all) \|/.test(line),
      );
    // Prettier pads the table's cells in the page: compare with runs of spaces as one.
    const spaced = (text: string) => text.replace(/ +/g, ' ');
    for (const line of table) expect(spaced(docs)).toContain(spaced(line));
  });

  it('at quick size with a budget of 20 facts, curation merges, memory grows slower than the facts learned, none lost', async () => {
    // The circle alone: the allotment register is there to break dreamd, and its losses are the eval's to print.
    const report = await runEval(generateLongDataset('quick').slice(0, 1), { mode: 'oracle', budget: 20 });
    const printed = renderReport(report);
    expect(printed).toContain('| most active facts of one type after any run (budget) | ');
    expect(report.totals.curationCalls).toBeGreaterThan(0);
    // The growth curve after every tenth session, and no reference fact lost by a merge.
    const [conversation] = report.conversations;
    expect(conversation!.curve.map((point) => point.sessions)).toEqual([10, 20, 24]);
    for (const point of conversation!.curve)
      expect(printed).toContain(
        `| ${conversation!.id} | ${point.sessions} | ${point.factsLearned} | ${point.activeFacts} | ${point.activeBytes} |`,
      );
    const last = conversation!.curve.at(-1)!;
    expect(last.activeFacts).toBeLessThan(last.factsLearned / 2);
    expect(report.totals.merged).toBeGreaterThan(0);
    expect(report.totals).toMatchObject({
      lost: 0,
      wronglyMerged: 0,
      wronglySuperseded: 0,
      keptMoreThanOnce: 0,
    });
  }, 120_000);
});

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
    // Named, with its session and turn, in the report and in what is printed.
    expect(report.misses.lost).toEqual([
      {
        conversation: 'tiny',
        sessionId: 'tiny-s1',
        turn: 'D1:2',
        text: 'Rui keeps bees on his roof in Porto.',
      },
    ]);
    expect(renderReport(report)).toContain('- tiny tiny-s1 D1:2: "Rui keeps bees on his roof in Porto."');
  });

  it('names every question whose answer recall missed, with what came first instead', async () => {
    const conversation = tiny('I keep bees on my roof in Porto.');
    const report = await runEval(
      [
        {
          ...conversation,
          qa: [
            ...conversation.qa,
            {
              question: 'Which insects live upstairs?',
              answer: 'bees',
              evidence: ['D1:2'],
              category: 'single-hop',
            },
          ],
        },
      ],
      { mode: 'oracle' },
    );
    expect(report.misses.recall).toEqual([
      expect.objectContaining({
        question: 'Which insects live upstairs?',
        category: 'single-hop',
        evidence: ['D1:2'],
        expected: ['Rui keeps bees on his roof in Porto.'],
      }),
    ]);
    expect(renderReport(report)).toContain(
      '- [tiny single-hop] "Which insects live upstairs?" wanted "Rui keeps bees on his roof in Porto." (D1:2)',
    );
    expect(renderReport(report)).toContain(
      "Recall misses (no answering fact or passage in dreamd's fused top 10): 1",
    );
  });

  it('finds through fused recall a question only a transcript answers, which the facts alone miss', async () => {
    // An aside no reference fact holds: no fact is ever made of it.
    const aside = beesWithTurn('I started reading Middlemarch on the train.', (conversation) => ({
      qa: [
        ...conversation.qa,
        {
          question: 'Which novel is Rui reading on the train?',
          answer: 'Middlemarch',
          evidence: ['D2:2'],
          category: 'transcript-only',
        },
      ],
    }));
    const report = await runEval([aside], { mode: 'oracle' });
    const hits = report.totals.recall['transcript-only']!;
    expect(hits.dreamdFused['@10']).toBe(1);
    expect(hits.dreamd['@10']).toBe(0);
    expect(hits.bm25RawTurns['@10']).toBe(1);
    expect(report.misses.recall).toEqual([]);
    // What recall returned, in tokens per question, fused and facts only.
    expect(report.totals.recallTokensPerQuery.fused).toBeGreaterThan(0);
    expect(report.totals.recallTokensPerQuery.facts).toBeGreaterThan(0);
    expect(renderReport(report)).toMatch(
      /^Tokens recall returned per question \(top 10, as the recall tool formats it\): \d+ fused, \d+ facts only\.$/m,
    );
  });

  it('counts a fact said again in other words, both copies active, as a duplicate kept, and names it', async () => {
    const twice = beesWithTurn('The hives up on my Porto roof are buzzing.', (conversation) => ({
      observation: {
        ...conversation.observation,
        session_2_observation: {
          ...conversation.observation.session_2_observation,
          Rui: [['Rui has beehives on the roof of his home in Porto.', 'D2:2']],
        },
      },
      dreamd_duplicates: [['D1:2', 'D2:2']],
    }));
    const report = await runEval([twice], { mode: 'oracle' });
    expect(report.totals).toMatchObject({ duplicatePairs: 1, duplicatesKept: 1, lost: 0 });
    expect(renderReport(report)).toContain(
      '- tiny: tiny-s1 D1:2 "Rui keeps bees on his roof in Porto." = tiny-s2 D2:2 "Rui has beehives on the roof of his home in Porto."',
    );
  });

  it('judges a duplicate pair held in one fact, or with one copy superseded, as kept once', () => {
    const facts = [
      { turn: 'D1:1', sessionId: 't-s1', speaker: 'Ana', text: 'Ana is allergic to sesame.' },
      { turn: 'D2:1', sessionId: 't-s2', speaker: 'Ana', text: 'Ana must avoid sesame.' },
    ];
    const pairs = [['D1:1', 'D2:1']] as const;
    const judge = (memory: { id: string; body: string; status: string }[]) =>
      duplicateFigures('t', pairs, facts, memory).kept;
    expect(
      judge([{ id: 'm', body: 'Ana is allergic to sesame. Ana must avoid sesame.', status: 'active' }]),
    ).toBe(0);
    expect(
      judge([
        { id: 'a', body: 'Ana is allergic to sesame.', status: 'active' },
        { id: 'b', body: 'Ana must avoid sesame.', status: 'superseded' },
      ]),
    ).toBe(0);
    expect(
      judge([
        { id: 'a', body: 'Ana is allergic to sesame.', status: 'active' },
        { id: 'b', body: 'Ana must avoid sesame.', status: 'active' },
      ]),
    ).toBe(1);
    expect(() => duplicateFigures('t', [['D1:1', 'D9:9']], facts, [])).toThrow(/D9:9, a turn without/);
  });

  it('throws, rather than judge a target, when the figure it reads has no input', async () => {
    const report = await runEval([{ ...tiny('I keep bees on my roof in Porto.'), dreamd_updates: [] }], {
      mode: 'oracle',
    });
    expect(() => verdicts(report)).toThrow(/no planted update chain/);
    const noQuestions = await runEval([{ ...tiny('I keep bees on my roof in Porto.'), qa: [] }], {
      mode: 'oracle',
    });
    expect(() => verdicts(noQuestions)).toThrow(/no recall over questions/);
    // A dataset that plants no rule has no rules line, rather than one met for want of rules.
    const noRules = await runEval([tiny('I keep bees on my roof in Porto.')], { mode: 'oracle' });
    expect(verdicts(noRules).map((verdict) => verdict.target)).toEqual([
      '0 dropped',
      '0 lost',
      '≥ 95 % of chains resolved to the newest',
      'recall hit@10 (fused) ≥ BM25 over raw turns + 2 points',
      // Judged on every dataset's backlog: the calls an extraction costs.
      'model calls ≤ 1.3 × extraction calls (backlog)',
      '< 5 % of extraction answers thrown away (backlog)',
    ]);
    expect(renderReport(noRules)).toContain('| rules taught ≥ 2 times in MEMORY.md | no rules planted |');
  });

  it('prices the oracle run on the default model', async () => {
    const report = await runEval([tiny('I keep bees on my roof in Porto.')], { mode: 'oracle' });
    expect(report.pricedAs).toBe('claude-haiku-5-5');
    expect(ORACLE_PRICED_AS).toBe('claude-haiku-5-5');
    const price = PRICE_TABLE['claude-haiku-5-5']!;
    const t = report.totals;
    // Input tokens include cache reads and writes: the cost lies between all of them read from the cache and
    // all of them written to it, at Haiku 5.5's prices (Haiku 4.5's output alone would cost 10 times more).
    const low = (t.inputTokens * price.cacheReadPerMTok + t.outputTokens * price.outputPerMTok) / 1e6;
    const high = (t.inputTokens * price.cacheWritePerMTok + t.outputTokens * price.outputPerMTok) / 1e6;
    expect(t.costUsd).toBeGreaterThanOrEqual(low);
    expect(t.costUsd).toBeLessThanOrEqual(high);
    expect(t.outputTokens * PRICE_TABLE['claude-haiku-4-5']!.outputPerMTok * 1e-6).toBeGreaterThan(high);
    expect(renderReport(report)).toContain('dollars per session (priced as claude-haiku-5-5)');
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

  it('loses no fact of the small dataset in oracle mode, a weekend resolved by the digest included', async () => {
    // "Last weekend I ran my first half marathon." reaches the model as "Last weekend [weekend of 2026-04-18] …":
    // the oracle finds the turn under the date the digest added, as a model reads it.
    const dataset = Dataset.parse(
      JSON.parse(readFileSync(new URL('../../eval/dataset/dreamd-small.json', import.meta.url), 'utf8')),
    );
    const report = await runEval(dataset, { mode: 'oracle', backlog: true });
    expect(report.totals).toMatchObject({ lost: 0, keptOnce: report.totals.referenceFacts });
  });
});

describe('the rules figures', () => {
  const facts = [
    { turn: 'D1:1', sessionId: 'g-s1', speaker: 'Vera', text: 'Lock the tool shed after every visit.' },
    {
      turn: 'D2:1',
      sessionId: 'g-s2',
      speaker: 'Vera',
      text: 'The tool shed should be locked after every visit.',
    },
    { turn: 'D3:1', sessionId: 'g-s3', speaker: 'Wim', text: 'Park bicycles along the north fence.' },
  ];
  const rule = {
    id: 'f-shed000000',
    body: 'The tool shed should be locked after every visit.',
    status: 'active',
    taughtAgain: { count: 1 },
  };
  const once = { id: 'f-bikes00000', body: 'Park bicycles along the north fence.', status: 'active' };

  it('count a rule as taught again and listed when MEMORY.md links the fact holding one of its wordings', () => {
    const figures = ruleFigures(
      'g',
      [['D1:1', 'D2:1'], ['D3:1']],
      facts,
      [rule, once],
      '- [Shed](feedback.md#f-shed000000) — x',
    );
    expect(figures).toEqual({
      rules: 2,
      taughtAgain: 1,
      reteachesPlanted: 1,
      reteachesCounted: 1,
      taughtTwice: 1,
      taughtTwiceInIndex: 1,
      misses: [],
    });
  });

  it('name a rule taught twice that MEMORY.md leaves out, and one never counted', () => {
    const figures = ruleFigures('g', [['D1:1', 'D2:1']], facts, [{ ...rule, taughtAgain: undefined }], '');
    expect(figures.taughtAgain).toBe(0);
    expect(figures.misses).toEqual([
      {
        conversation: 'g',
        texts: ['Lock the tool shed after every visit.', 'The tool shed should be locked after every visit.'],
        counted: 0,
      },
    ]);
  });
});
