import { describe, expect, it } from 'vitest';
import { halvedAnswers } from '../../eval/call-kinds.js';
import { referenceFacts, sessionsOf } from '../../eval/format.js';
import { runEvalBothWays } from '../../eval/harness.js';
import {
  crossMerges,
  holdsText,
  instructionFigures,
  type InstructionHolder,
} from '../../eval/instruction-figures.js';
import {
  convertDialogue,
  MEMORYCODE_SIZES,
  memoryCodeDataset,
  readMemoryCodeSample,
  splitTurns,
} from '../../eval/memorycode.js';
import { renderBothWays } from '../../eval/run.js';
import { verdicts } from '../../eval/verdict.js';
import { createTally, tallyNotes } from '../../src/consolidation/extraction/extract-tally.js';

describe('the MemoryCode converter', () => {
  const sample = readMemoryCodeSample();

  it('ships 60 dialogues, five of each length from 1 to 100 sessions', () => {
    const lengths = Object.values(sample).map((dialogue) => dialogue.sessions.length);
    expect(lengths).toHaveLength(60);
    const counts = new Map<number, number>();
    for (const length of lengths) counts.set(length, (counts.get(length) ?? 0) + 1);
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 100]);
    expect([...counts.values()].every((count) => count === 5)).toBe(true);
  });

  it('keeps every coding instruction of the source, each version on a mentor turn that states it, and its changes as updates', () => {
    for (const name of [...MEMORYCODE_SIZES.quick, 'dialogue_192', 'dialogue_246']) {
      const dialogue = sample[name]!;
      const conversation = convertDialogue(name, dialogue);
      // From the source: one entry per coding instruction of a session, the id across the dialogue.
      const entries = dialogue.instructions.flatMap((session) => session.filter((entry) => entry !== -1));
      const ids = new Set(entries.map((entry) => entry[0]));
      const facts = referenceFacts(conversation);
      expect(facts).toHaveLength(entries.length);
      expect(conversation.dreamd_instructions).toHaveLength(ids.size);
      expect(conversation.dreamd_updates).toHaveLength(entries.length - ids.size);
      const texts = dialogue.sessions.flatMap((session) =>
        session.topic.filter((_, which) => session.type[which]?.startsWith('instruction') === true),
      );
      expect(facts.map((fact) => fact.text).sort()).toEqual([...texts].sort());
      const sessions = sessionsOf(conversation);
      expect(sessions).toHaveLength(dialogue.sessions.length);
      if (sessions.length > 1)
        expect(Date.parse(sessions[1]!.startedAt) - Date.parse(sessions[0]!.startedAt)).toBe(86_400_000);
      const turns = new Map(sessions.flatMap((session) => session.turns.map((turn) => [turn.dia_id, turn])));
      for (const fact of facts) {
        const turn = turns.get(fact.turn)!;
        expect(turn.speaker).toBe(dialogue.context.mentor);
        // The first quoted part ('c_', '@validate') tells one instruction from another: the turn says it.
        const quoted = /'([^']+)'/.exec(fact.text)?.[1];
        if (quoted !== undefined) expect(turn.text).toContain(quoted);
      }
    }
  });

  it('reads "Name: …" turns, a shortened name among them, and cuts a turn stating two instructions in two', () => {
    expect(
      splitTurns('Ethan: Hi.\n\nRado: Hello.\n\nE: Start class names with a digit.\n\nmore', [
        'Ethan',
        'Rado',
      ]),
    ).toEqual([
      { speaker: 'Ethan', text: 'Hi.' },
      { speaker: 'Rado', text: 'Hello.' },
      { speaker: 'Ethan', text: 'Start class names with a digit.\n\nmore' },
    ]);
    // Dialogue 175, session 5: "Start function names with 'c_' and end method names with '_md'."
    const conversation = convertDialogue('dialogue_175', sample.dialogue_175!);
    const session = sessionsOf(conversation)[4]!;
    const stating = referenceFacts(conversation)
      .filter((fact) => fact.sessionId === session.id)
      .map((fact) => session.turns.find((turn) => turn.dia_id === fact.turn)!.text);
    expect(stating).toHaveLength(2);
    expect(new Set(stating).size).toBe(2);
    expect(stating.some((text) => text.includes("'c_'") && !text.includes("'_md'"))).toBe(true);
  });
});

describe('the instruction figures', () => {
  const facts = [
    { turn: 'D1:1', sessionId: 's1', speaker: 'M', text: 'always include try statements in methods' },
    { turn: 'D2:1', sessionId: 's2', speaker: 'M', text: 'always include try statements in functions' },
    { turn: 'D3:1', sessionId: 's3', speaker: 'M', text: "always start function names with 'a_'" },
    { turn: 'D4:1', sessionId: 's4', speaker: 'M', text: "always start function names with 'b_'" },
  ];
  const groups = [['D1:1'], ['D2:1'], ['D3:1', 'D4:1']];
  const fact = (id: string, body: string, status = 'active', more: Partial<InstructionHolder> = {}) => ({
    id,
    title: body,
    body,
    status,
    sources: [],
    ...more,
  });

  it('count memory that keeps each instruction apart and only the newest version active as met', () => {
    const memory = [
      fact('1', facts[0]!.text),
      fact('2', facts[1]!.text),
      fact('3', facts[2]!.text, 'superseded', { supersededBy: '4' }),
      fact('4', facts[3]!.text),
    ];
    expect(instructionFigures('c', groups, facts, memory, holdsText)).toMatchObject({
      instructions: 3,
      changed: 1,
      newestOnly: 1,
      lost: 0,
      givenOnce: 2,
      givenOnceActive: 2,
      crossMerges: 0,
    });
  });

  it('name a near-twin superseded by the other, two held in one fact, and one folded into the other', () => {
    const memory = [
      fact('1', facts[0]!.text, 'superseded', { supersededBy: '2' }),
      fact('2', facts[1]!.text, 'active', { sources: ['s3'] }),
      fact('5', `${facts[3]!.text}. ${facts[0]!.text}`),
    ];
    const figures = instructionFigures('c', groups, facts, memory, holdsText);
    expect(figures.crossMerges).toBe(3);
    expect(figures.misses.crossMerges.map((merge) => merge.how).sort()).toEqual([
      'folded into the other',
      'held in one fact',
      'superseded by the other',
    ]);
    // The 'a_' version is nowhere: lost (folded into the 'functions' rule, whose fact names its session).
    expect(figures.lost).toBe(1);
    expect(crossMerges('c', [[facts[0]!], [facts[2]!]], [fact('9', facts[0]!.text)], holdsText)).toEqual([]);
    // A version lost in a session whose other instruction's fact lists that session was not folded into it.
    const sameSession = [
      { ...facts[0]!, sessionId: 's9' },
      { ...facts[2]!, sessionId: 's9' },
    ];
    const listing = fact('9', facts[2]!.text, 'active', { sources: ['s9'] });
    expect(crossMerges('c', [[sameSession[0]!], [sameSession[1]!]], [listing], holdsText)).toEqual([]);
  });
});

describe('npm run eval -- --dataset memorycode --size quick', () => {
  it('runs the quick dialogues both ways and judges the instruction and call targets', async () => {
    const dataset = memoryCodeDataset('quick');
    const both = await runEvalBothWays(dataset, { mode: 'oracle' });
    const instructions = dataset.reduce((total, c) => total + c.dreamd_instructions.length, 0);
    const changed = dataset.reduce(
      (total, c) => total + c.dreamd_instructions.filter((group) => group.length > 1).length,
      0,
    );
    for (const report of [both.perSession, both.backlog]) {
      const t = report.totals;
      expect(t.instructions).toBe(instructions);
      expect(t.instructionsChanged).toBe(changed);
      expect(t.instructionsGivenOnce).toBe(instructions - changed);
      // Every call the summaries count reached the model through the counter, each of one kind.
      expect(t.callsByKind.extraction + t.callsByKind.updateCheck + t.callsByKind.curation).toBe(t.calls);
      expect(t.callsByKind.extraction).toBeGreaterThan(0);
      expect(verdicts(report).map((verdict) => verdict.target)).not.toContain(
        'recall hit@10 (fused) ≥ BM25 over raw turns + 2 points',
      );
    }
    const printed = renderBothWays(both);
    for (const target of [
      '≥ 95 % of changed instructions with only the newest version active',
      '0 instructions lost',
      '≥ 99 % of instructions given once still active',
      '0 merges across instructions',
    ])
      expect(printed).toMatch(
        new RegExp(
          `^- ${target}: one run per session (?:MET|MISSED) \\(.+\\); backlog (?:MET|MISSED) \\(.+\\)$`,
          'm',
        ),
      );
    expect(printed).toMatch(
      /^- model calls ≤ 1\.3 × extraction calls \(backlog\): one run per session figure only \(.+\); backlog (?:MET|MISSED) \(.+\)$/m,
    );
    expect(printed).toMatch(
      /^\| model calls by kind: extraction \/ update check \/ curation \| \d+ \/ \d+ \/ \d+ /m,
    );
  }, 120_000);

  it('counts the answers a run asked again in halves from the notes dreamd writes', () => {
    const tally = createTally();
    tally.splits.output = 2;
    tally.splits.facts = 3;
    const notes = tallyNotes(tally, {
      maxOutputTokens: 8000,
      limits: { maxFactsPerAnswer: 100, maxFactsPerSession: 200 } as never,
    });
    expect(halvedAnswers(notes)).toEqual({ outputLimit: 2, factLimit: 3 });
  });
});
