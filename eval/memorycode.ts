/**
 * MemoryCode (github.com/for-ai/MemoryCode, Apache-2.0; the sample in `dataset/memorycode/`, see its NOTICE) in
 * the eval's conversation format. A dialogue is a mentor and a mentee over 1 to 100 sessions; some sessions give
 * coding instructions ("always start function argument names with 'e_'"), later sessions change some of them
 * ("… with 'g_'"), among filler talk. What the dialogue records, and how it maps:
 *
 * - `sessions[s].type` and `.topic`, aligned: a filler topic first when the session has one (`filler-add`,
 *   `filler-update`: small talk; `filler-instruction-add` / `-update`: advice outside the code, "use Vim as the
 *   preferred IDE"), then the session's coding instructions (`instruction-add`, `instruction-update`), their texts.
 * - `instructions[s]`: `[-1]` for a session without coding instructions, else one `[instruction id, version]`
 *   per coding instruction, in the order of the topics. The id is the instruction's across the dialogue (topics.json
 *   in the repository): the sessions holding one id, in order, are its versions, oldest first. A version is not
 *   always the type's: an instruction without updates may come back as an `instruction-add` of another version.
 * - `text`: "Mentor: …\n\nMentee: …" turns.
 *
 * Mapped: the mentor and the mentee are the two speakers (every turn reaches the transcript as "Name: text", as
 * the harness writes every dataset's turns); sessions a day apart from 2025-01-06; each coding instruction's
 * text is a reference fact of the mentor turn that states it (the turn sharing most of its words; a turn stating
 * two is cut in two at the sentence of the second, or at its clause when one sentence states both, so each turn
 * holds one fact); an instruction's consecutive versions are `dreamd_updates` pairs and its versions in order a
 * `dreamd_instructions` group, which the oracle answers as feedback. Filler topics, the advice outside the code among them, carry no reference
 * fact: MemoryCode scores the coding instructions only, and the oracle extracts nothing else. No questions: the
 * benchmark asks for code, not answers.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { Conversation } from './format.js';
import { wordsOf } from './instruction-figures.js';

/** A session of a MemoryCode dialogue, the fields the conversion reads. */
export const MemoryCodeSession = z.looseObject({
  type: z.array(z.string()),
  topic: z.array(z.string()),
  text: z.string(),
});

/** A MemoryCode dialogue (`dataset/dialogue_<N>.json`), the fields the conversion reads. */
export const MemoryCodeDialogue = z.looseObject({
  context: z.looseObject({ mentor: z.string(), mentee: z.string() }),
  /** Per session: `[-1]`, or `[instruction id, version]` per coding instruction, in the order of its topics. */
  instructions: z.array(z.array(z.union([z.literal(-1), z.tuple([z.number(), z.number()])]))),
  sessions: z.array(MemoryCodeSession),
});
export type MemoryCodeDialogue = z.infer<typeof MemoryCodeDialogue>;

/** The sample as shipped: dialogues by file name (`dialogue_1`). */
export const MemoryCodeSample = z.record(z.string(), MemoryCodeDialogue);

/** The first session's day; each next session is a day later. */
const FIRST_DAY = Date.UTC(2025, 0, 6, 9, 0);

/**
 * `quick`: three dialogues of 4, 5 and 10 sessions that change instructions (19 sessions, 10 updates) for the test;
 * `full`: the whole sample, 60 dialogues, 1,400 sessions.
 */
export const MEMORYCODE_SIZES = {
  quick: ['dialogue_93', 'dialogue_138', 'dialogue_175'],
  full: undefined,
} as const;
export type MemoryCodeSize = keyof typeof MEMORYCODE_SIZES;

/**
 * An instruction's words, and those no other instruction of its session holds ("@validate" beside
 * "@require_kwargs", both "decorator from the 'pedantic' module to all methods"): one of those outweighs any
 * number of shared ones.
 */
interface InstructionWords {
  readonly all: ReadonlySet<string>;
  readonly own: ReadonlySet<string>;
  /** Its quoted words ('h_', '@validate', 'gzip'): what a turn must say to state this instruction. */
  readonly quoted: ReadonlySet<string>;
}

/**
 * How well `text` states an instruction: its quoted words found, a hundred times; its own words, ten times; all
 * its words ("I'd like you to follow a naming convention for your function arguments" announces; "For function
 * arguments, I want you to prefix them with 'h_'" states).
 */
function overlap(instruction: InstructionWords, text: string): number {
  const words = wordsOf(text);
  const found = (set: ReadonlySet<string>) => [...set].filter((word) => words.has(word)).length;
  return 100 * found(instruction.quoted) + 10 * found(instruction.own) + found(instruction.all);
}

/** Each instruction's words, and its own among the others'. */
function instructionWords(instructions: readonly string[]): InstructionWords[] {
  const sets = instructions.map(wordsOf);
  return sets.map((all, index) => ({
    all,
    quoted: new Set(
      [...instructions[index]!.matchAll(/'([^']+)'/g)].flatMap((match) => [...wordsOf(match[1]!)]),
    ),
    own: new Set([...all].filter((word) => !sets.some((other, which) => which !== index && other.has(word)))),
  }));
}

interface DraftTurn {
  readonly speaker: string;
  readonly text: string;
}

/**
 * "Name: …\n\nName: …" → turns. A few dialogues shorten a name to its start ("E:" for Ethan) in places; a
 * paragraph that names no speaker belongs to the turn before it.
 */
export function splitTurns(text: string, speakers: readonly string[]): DraftTurn[] {
  const turns: { speaker: string; text: string }[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const trimmed = paragraph.trim();
    if (trimmed === '') continue;
    const label = /^([^:\n]{1,40}):\s/.exec(trimmed)?.[1];
    const named = label === undefined ? [] : speakers.filter((name) => name.startsWith(label));
    const speaker = named.length === 1 ? named[0]! : speakers.find((name) => name === label);
    if (speaker !== undefined) turns.push({ speaker, text: trimmed.slice(label!.length + 1).trim() });
    else if (turns.length > 0) turns.at(-1)!.text += `\n\n${trimmed}`;
    else turns.push({ speaker: speakers[0]!, text: trimmed });
  }
  return turns;
}

/** Pieces of a text, each with the character it starts at: sentences, or clauses (cut at , ; and "and"). */
function pieces(text: string, pattern: RegExp, offset = 0): { start: number; text: string }[] {
  const out: { start: number; text: string }[] = [];
  for (const match of text.matchAll(pattern))
    if (match[0].trim() !== '') out.push({ start: offset + match.index, text: match[0] });
  return out;
}

const SENTENCE = /[^.!?]+(?:[.!?]+|$)/g;
const CLAUSE = /(?:[^,;]+?)(?:[,;]|(?=\band\b)|$)/g;

/** The piece sharing most words with an instruction (the first of equals). */
function best(words: InstructionWords, candidates: readonly { start: number; text: string }[]) {
  let chosen = candidates[0]!;
  for (const candidate of candidates)
    if (overlap(words, candidate.text) > overlap(words, chosen.text)) chosen = candidate;
  return chosen;
}

/** Where a turn states an instruction: the start of its sentence, and of its clause in that sentence. */
function stating(words: InstructionWords, text: string): { sentence: number; clause: number } {
  const sentence = best(words, pieces(text, SENTENCE));
  const clause = best(words, pieces(sentence.text, CLAUSE, sentence.start));
  return { sentence: sentence.start, clause: clause.start };
}

/** A session's turns with the coding instructions each states (at most one a turn after cutting). */
interface SessionDraft {
  readonly turns: { speaker: string; text: string; instruction?: number }[];
  /** Instructions (index among the session's) no turn could hold alone: none in the shipped sample. */
  readonly unplaced: number[];
}

/**
 * Places each of a session's instruction texts on the mentor turn sharing most of its words (the first of
 * equals), and cuts a turn that two or more land on at the sentences that state them.
 */
export function placeInstructions(
  turns: readonly DraftTurn[],
  mentor: string,
  instructions: readonly string[],
): SessionDraft {
  const onTurn = new Map<number, number[]>();
  const unplaced: number[] = [];
  const wordsByInstruction = instructionWords(instructions);
  instructions.forEach((_, index) => {
    const words = wordsByInstruction[index]!;
    let best = -1;
    let bestScore = 0;
    turns.forEach((turn, position) => {
      if (turn.speaker !== mentor) return;
      const score = overlap(words, turn.text);
      if (score > bestScore) [best, bestScore] = [position, score];
    });
    if (best === -1) unplaced.push(index);
    else onTurn.set(best, [...(onTurn.get(best) ?? []), index]);
  });
  const out: { speaker: string; text: string; instruction?: number }[] = [];
  turns.forEach((turn, position) => {
    const here = onTurn.get(position) ?? [];
    if (here.length <= 1) {
      out.push({ ...turn, ...(here.length === 1 ? { instruction: here[0]! } : {}) });
      return;
    }
    // The sentence stating each instruction, and its clause there; the turn is cut before each later one's
    // sentence, or before its clause when two share a sentence ("Start function names with 'c_' and end …").
    const at = here
      .map((index) => ({ index, ...stating(wordsByInstruction[index]!, turn.text) }))
      .sort((x, y) => x.clause - y.clause);
    const kept = at.filter((entry, which) => which === 0 || entry.clause !== at[which - 1]!.clause);
    for (const entry of at) if (!kept.includes(entry)) unplaced.push(entry.index);
    const cuts = kept.map((entry, which) =>
      which === 0 ? 0 : entry.sentence !== kept[which - 1]!.sentence ? entry.sentence : entry.clause,
    );
    kept.forEach((entry, which) => {
      const text = turn.text.slice(cuts[which], cuts[which + 1] ?? turn.text.length).trim();
      out.push({ speaker: turn.speaker, text, instruction: entry.index });
    });
  });
  return { turns: out, unplaced };
}

/** One MemoryCode dialogue as an eval conversation (`sampleId`: `memorycode-<N>`). */
export function convertDialogue(sampleId: string, dialogue: MemoryCodeDialogue): Conversation {
  const { mentor, mentee } = dialogue.context;
  if (dialogue.instructions.length !== dialogue.sessions.length)
    throw new Error(
      `${sampleId}: ${dialogue.instructions.length} instruction entries for ${dialogue.sessions.length} sessions`,
    );
  const conversation: Record<string, unknown> = { speaker_a: mentor, speaker_b: mentee };
  const observation: Record<string, Record<string, [string, string][]>> = {};
  /** Instruction id → the turns of its versions, in order. */
  const versions = new Map<number, string[]>();
  dialogue.sessions.forEach((session, index) => {
    const number = index + 1;
    const entries = dialogue.instructions[index]!.filter((entry) => entry !== -1);
    const texts = session.topic.filter((_, which) => session.type[which]?.startsWith('instruction') === true);
    if (texts.length !== entries.length)
      throw new Error(
        `${sampleId} session ${number}: ${texts.length} instruction topics, ${entries.length} instruction entries`,
      );
    const draft = placeInstructions(splitTurns(session.text, [mentor, mentee]), mentor, texts);
    if (draft.unplaced.length > 0)
      throw new Error(
        `${sampleId} session ${number}: no mentor turn states ${draft.unplaced.map((which) => `"${texts[which]}"`).join(', ')} alone`,
      );
    const turns = draft.turns.map((turn, position) => ({
      speaker: turn.speaker,
      dia_id: `D${number}:${position + 1}`,
      text: turn.text,
    }));
    conversation[`session_${number}`] = turns;
    conversation[`session_${number}_date_time`] = new Date(FIRST_DAY + index * 86_400_000).toISOString();
    const facts: [string, string][] = [];
    draft.turns.forEach((turn, position) => {
      if (turn.instruction === undefined) return;
      const turnId = turns[position]!.dia_id;
      facts.push([texts[turn.instruction]!, turnId]);
      const id = entries[turn.instruction]![0];
      versions.set(id, [...(versions.get(id) ?? []), turnId]);
    });
    if (facts.length > 0) observation[`session_${number}_observation`] = { [mentor]: facts };
  });
  const groups = [...versions.values()];
  return Conversation.parse({
    sample_id: sampleId,
    conversation,
    observation,
    qa: [],
    dreamd_updates: groups.flatMap((turns) =>
      turns.slice(1).map((newer, which) => [turns[which]!, newer] as [string, string]),
    ),
    dreamd_instructions: groups,
  });
}

/** The shipped sample, parsed (the whole of it; `MEMORYCODE_SIZES` picks). */
export function readMemoryCodeSample(): Record<string, MemoryCodeDialogue> {
  const file = new URL('./dataset/memorycode/dialogues.json.gz', import.meta.url);
  return MemoryCodeSample.parse(JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')));
}

/** The MemoryCode dataset at a size, converted: `memorycode-<N>` conversations in the sample's order. */
export function memoryCodeDataset(size: MemoryCodeSize): Conversation[] {
  const sample = readMemoryCodeSample();
  const names = MEMORYCODE_SIZES[size] ?? Object.keys(sample);
  return names.map((name) => {
    const dialogue = sample[name];
    if (dialogue === undefined) throw new Error(`the MemoryCode sample holds no ${name}`);
    return convertDialogue(name.replace(/^dialogue_/, 'memorycode-'), dialogue);
  });
}
