/**
 * Figures of instructions (`dreamd_instructions`: MemoryCode's coding instructions, each with its versions) and
 * of near-twin rules (`dreamd_twins`), over the memory a run left: whether each changed instruction's newest
 * version is the only one active, instructions lost, instructions given once still active, and merges across
 * instructions. Pure functions over the dataset's reference facts and memory's facts (active and archived).
 */
import type { ReferenceFact } from './format.js';

/** A memory fact as these figures read it. */
export interface InstructionHolder {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly status: string;
  readonly supersededBy?: string | undefined;
  readonly sources: readonly string[];
}

/** Whether a memory fact holds a reference text. */
export type Holds = (fact: InstructionHolder, text: string) => boolean;

/** Words the model-mode matcher ignores: they say nothing of which instruction it is. */
const IGNORED = new Set(
  'a an and all always any are as at be by even for from he her his if in is it its not now of on or she the their they to use used was with your you'.split(
    ' ',
  ),
);

/** A text's words, lower case, a plural's "s" dropped, without {@link IGNORED}'s. */
export function wordsOf(text: string): Set<string> {
  return new Set(
    (text.toLowerCase().match(/[\p{L}\p{N}_@]+/gu) ?? [])
      .filter((word) => word.length > 1 && !IGNORED.has(word))
      .map((word) => (word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word)),
  );
}

/** Oracle mode: the fact's body holds the text as written (the oracle answers reference texts). */
export const holdsText: Holds = (fact, text) => fact.body.includes(text);

/**
 * Model mode: every word of the text is in the fact's title or body ("Start function argument names with
 * 'e_'." holds "always start function argument names with 'e_'"; 'f_' tells the next version apart).
 */
export const holdsWords: Holds = (fact, text) => {
  const words = wordsOf(`${fact.title}\n${fact.body}`);
  return [...wordsOf(text)].every((word) => words.has(word));
};

/** Two instructions memory joined: held in one fact, or one superseded by (or folded into) a fact of the other. */
export interface CrossMerge {
  readonly conversation: string;
  readonly how: 'held in one fact' | 'superseded by the other' | 'folded into the other';
  /** The instruction texts: the one that left, then the one it went into (or both, held together). */
  readonly texts: readonly [string, string];
  /** The memory fact's body that holds the other (or both). */
  readonly fact: string;
}

/** An instruction whose figure failed, with the statuses of each version's copies (oldest first). */
export interface InstructionMiss {
  readonly conversation: string;
  readonly versions: readonly {
    readonly turn: string;
    readonly text: string;
    readonly statuses: readonly string[];
  }[];
}

export interface InstructionFigures {
  readonly instructions: number;
  /** Instructions changed at least once, and those whose newest version is the only one active. */
  readonly changed: number;
  readonly newestOnly: number;
  /** Instructions with a version nowhere in memory or the archive. */
  readonly lost: number;
  /** Instructions given once and never changed, and those still active. */
  readonly givenOnce: number;
  readonly givenOnceActive: number;
  /** Pairs of different instructions joined (each pair once). */
  readonly crossMerges: number;
  readonly misses: {
    readonly notNewestOnly: readonly InstructionMiss[];
    readonly lost: readonly InstructionMiss[];
    readonly givenOnceInactive: readonly InstructionMiss[];
    readonly crossMerges: readonly CrossMerge[];
  };
}

/** Each group's version texts, by the turn ids the dataset gives. */
function textsOf(
  conversation: string,
  groups: readonly (readonly string[])[],
  facts: readonly ReferenceFact[],
): { turn: string; text: string; sessionId: string }[][] {
  const byTurn = new Map(facts.map((fact) => [fact.turn, fact]));
  return groups.map((group) =>
    group.map((turn) => {
      const fact = byTurn.get(turn);
      if (fact === undefined)
        throw new Error(`${conversation}: an instruction names ${turn}, a turn without a reference fact`);
      return { turn, text: fact.text, sessionId: fact.sessionId };
    }),
  );
}

/**
 * Pairs of different groups that memory joined: a fact holding texts of both; a copy of one superseded by a
 * fact holding the other's text and none of its own; a version nowhere in memory whose session is among the
 * sources of a fact holding a text of the other told in another session (reconcile folded it in; an instruction
 * of the same session lists that session anyway). Each pair once, first way found.
 */
export function crossMerges(
  conversation: string,
  groups: readonly (readonly { turn: string; text: string; sessionId: string }[])[],
  memory: readonly InstructionHolder[],
  holds: Holds,
): CrossMerge[] {
  const byId = new Map(memory.map((fact) => [fact.id, fact]));
  const groupsHeld = (fact: InstructionHolder) =>
    groups.flatMap((group, index) => (group.some((version) => holds(fact, version.text)) ? [index] : []));
  const found = new Map<string, CrossMerge>();
  const add = (a: number, b: number, merge: Omit<CrossMerge, 'conversation'>) => {
    const key = [a, b].sort((x, y) => x - y).join('-');
    if (!found.has(key)) found.set(key, { conversation, ...merge });
  };
  const firstText = (index: number, fact: InstructionHolder) =>
    groups[index]!.find((version) => holds(fact, version.text))?.text ?? groups[index]![0]!.text;
  for (const fact of memory) {
    const held = groupsHeld(fact);
    for (let i = 0; i < held.length; i += 1)
      for (let j = i + 1; j < held.length; j += 1)
        add(held[i]!, held[j]!, {
          how: 'held in one fact',
          texts: [firstText(held[i]!, fact), firstText(held[j]!, fact)],
          fact: fact.body,
        });
    const successor = fact.supersededBy === undefined ? undefined : byId.get(fact.supersededBy);
    if (successor === undefined) continue;
    const into = groupsHeld(successor);
    for (const from of held)
      if (!into.includes(from))
        for (const other of into)
          add(from, other, {
            how: 'superseded by the other',
            texts: [firstText(from, fact), firstText(other, successor)],
            fact: successor.body,
          });
  }
  // Of another group told in another session: a fact of an instruction told in the same session lists it anyway.
  const heldFromElsewhere = (fact: InstructionHolder, index: number, sessionId: string) =>
    groups.flatMap((group, other) =>
      other !== index && group.some((version) => version.sessionId !== sessionId && holds(fact, version.text))
        ? [other]
        : [],
    );
  groups.forEach((group, index) => {
    for (const version of group) {
      if (memory.some((fact) => holds(fact, version.text))) continue;
      const into = memory.find(
        (fact) =>
          fact.sources.includes(version.sessionId) &&
          heldFromElsewhere(fact, index, version.sessionId).length > 0,
      );
      if (into === undefined) continue;
      const other = heldFromElsewhere(into, index, version.sessionId)[0]!;
      add(index, other, {
        how: 'folded into the other',
        texts: [version.text, firstText(other, into)],
        fact: into.body,
      });
    }
  });
  return [...found.values()];
}

/** The instruction figures of one conversation. */
export function instructionFigures(
  conversation: string,
  groups: readonly (readonly string[])[],
  facts: readonly ReferenceFact[],
  memory: readonly InstructionHolder[],
  holds: Holds,
): InstructionFigures {
  const instructions = textsOf(conversation, groups, facts);
  const active = memory.filter((fact) => fact.status === 'active');
  const isActive = (text: string) => active.some((fact) => holds(fact, text));
  const miss = (versions: readonly { turn: string; text: string }[]): InstructionMiss => ({
    conversation,
    versions: versions.map((version) => ({
      ...version,
      statuses: memory.filter((fact) => holds(fact, version.text)).map((fact) => fact.status),
    })),
  });
  const changed = instructions.filter((versions) => versions.length > 1);
  const notNewestOnly = changed.filter((versions) => {
    const newest = versions.at(-1)!.text;
    return !isActive(newest) || versions.slice(0, -1).some((version) => isActive(version.text));
  });
  const lost = instructions.filter((versions) =>
    versions.some((version) => !memory.some((fact) => holds(fact, version.text))),
  );
  const once = instructions.filter((versions) => versions.length === 1);
  const onceInactive = once.filter((versions) => !isActive(versions[0]!.text));
  const merges = crossMerges(conversation, instructions, memory, holds);
  return {
    instructions: instructions.length,
    changed: changed.length,
    newestOnly: changed.length - notNewestOnly.length,
    lost: lost.length,
    givenOnce: once.length,
    givenOnceActive: once.length - onceInactive.length,
    crossMerges: merges.length,
    misses: {
      notNewestOnly: notNewestOnly.map(miss),
      lost: lost.map(miss),
      givenOnceInactive: onceInactive.map(miss),
      crossMerges: merges,
    },
  };
}

export interface TwinFigures {
  /** Planted near-twin pairs, those with both rules active, and those memory joined. */
  readonly pairs: number;
  readonly bothActive: number;
  readonly joined: number;
  readonly misses: readonly CrossMerge[];
  /** Pairs not both active, as the two texts. */
  readonly notBothActive: readonly (readonly [string, string])[];
}

/** The near-twin figures of one conversation: both of each pair active, and neither joined to the other. */
export function twinFigures(
  conversation: string,
  pairs: readonly (readonly [string, string])[],
  facts: readonly ReferenceFact[],
  memory: readonly InstructionHolder[],
  holds: Holds,
): TwinFigures {
  const active = memory.filter((fact) => fact.status === 'active');
  let bothActive = 0;
  const notBothActive: [string, string][] = [];
  const misses: CrossMerge[] = [];
  for (const pair of pairs) {
    const [a, b] = textsOf(conversation, [[pair[0]], [pair[1]]], facts).map((group) => group[0]!);
    // Both active in facts of their own: one fact holding both is a merge, not two rules kept.
    const alone = (text: string, other: string) =>
      active.some((fact) => holds(fact, text) && !holds(fact, other));
    if (alone(a!.text, b!.text) && alone(b!.text, a!.text)) bothActive += 1;
    else notBothActive.push([a!.text, b!.text]);
    misses.push(...crossMerges(conversation, [[a!], [b!]], memory, holds));
  }
  return { pairs: pairs.length, bothActive, joined: misses.length, misses, notBothActive };
}
