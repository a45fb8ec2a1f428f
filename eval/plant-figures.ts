/**
 * Figures of the plants that break dreamd, over the memory a run left: reworded duplicates (`dreamd_duplicates`)
 * and updates whose older fact was learned far back. Pure functions over the dataset's reference facts and the
 * memory's facts, so the harness only gathers what they read.
 */
import type { ReferenceFact } from './format.js';
import { wordsOf } from './instruction-figures.js';

/**
 * An update is "far back" when its older fact was learned this many reference facts before the newer one: far
 * more than a call's memory list holds (`limits.memoryTokensPerCall`, 4,000 tokens by default, and in the eval
 * 300), so only a list that finds the older fact by what the session says can show it to the model.
 */
export const FAR_BACK_FACTS = 200;

/** A memory fact as these figures read it. */
export interface HeldFact {
  readonly id: string;
  readonly body: string;
  readonly status: string;
}

/** A planted duplicate pair that memory keeps as two active facts. */
export interface DuplicateMiss {
  readonly conversation: string;
  readonly pair: readonly { readonly turn: string; readonly sessionId: string; readonly text: string }[];
}

/** Active facts holding a reference text: the fact written with it, or a fact curation merged it into. */
export function activeHolders(text: string, facts: readonly HeldFact[]): Set<string> {
  return new Set(
    facts.filter((fact) => fact.status === 'active' && fact.body.includes(text)).map((fact) => fact.id),
  );
}

/** Turn id → the reference fact said there; a pair naming a turn without one is a broken dataset. */
function factOfTurn(turn: string, byTurn: ReadonlyMap<string, ReferenceFact>, conversation: string) {
  const fact = byTurn.get(turn);
  if (fact === undefined)
    throw new Error(`${conversation}: dreamd_duplicates names ${turn}, a turn without a reference fact`);
  return fact;
}

/**
 * Each duplicate pair, judged: a miss when both texts are active in two different facts (memory holds the
 * fact twice); fine when one is active and the other is gone, superseded, or held inside the same fact.
 */
export function duplicateFigures(
  conversation: string,
  pairs: readonly (readonly [string, string])[],
  facts: readonly ReferenceFact[],
  memory: readonly HeldFact[],
): { pairs: number; kept: number; misses: DuplicateMiss[] } {
  const byTurn = new Map(facts.map((fact) => [fact.turn, fact]));
  const misses: DuplicateMiss[] = [];
  for (const [first, second] of pairs) {
    const a = factOfTurn(first, byTurn, conversation);
    const b = factOfTurn(second, byTurn, conversation);
    const holdersA = activeHolders(a.text, memory);
    const holdersB = activeHolders(b.text, memory);
    const shared = [...holdersA].some((id) => holdersB.has(id));
    if (holdersA.size > 0 && holdersB.size > 0 && !shared)
      misses.push({
        conversation,
        pair: [a, b].map((fact) => ({ turn: fact.turn, sessionId: fact.sessionId, text: fact.text })),
      });
  }
  return { pairs: pairs.length, kept: misses.length, misses };
}

/** Turn id → the partner of its duplicate pair, both ways. */
export function duplicatePartners(pairs: readonly (readonly [string, string])[]): Map<string, string> {
  return new Map(pairs.flatMap(([a, b]) => [[a, b] as const, [b, a] as const]));
}

/** The session number of `<sample>-s<N>` and the turn number of `D<session>:<turn>` (0 when not of that form). */
function orderOf(fact: ReferenceFact): [number, number] {
  const session = Number(/-s(\d+)$/.exec(fact.sessionId)?.[1] ?? 0);
  const turn = Number(/^D\d+:(\d+)$/.exec(fact.turn)?.[1] ?? 0);
  return [session, turn];
}

/** Each reference fact's place in the order the conversation learned them: by session, then by turn. */
export function learnedOrder(facts: readonly ReferenceFact[]): Map<string, number> {
  const sorted = [...facts].sort((x, y) => {
    const [sessionX, turnX] = orderOf(x);
    const [sessionY, turnY] = orderOf(y);
    return sessionX - sessionY || turnX - turnY;
  });
  return new Map(sorted.map((fact, position) => [fact.turn, position]));
}

/** Whether a chain (turn ids, oldest first) holds a link whose older fact came {@link FAR_BACK_FACTS} or more before. */
export function isFarBack(chain: readonly string[], order: ReadonlyMap<string, number>): boolean {
  return chain.slice(1).some((newer, index) => {
    const older = order.get(chain[index]!);
    const position = order.get(newer);
    return older !== undefined && position !== undefined && position - older >= FAR_BACK_FACTS;
  });
}

/** A memory fact as the rule figures read it. */
export interface RuleHolder extends HeldFact {
  readonly file?: string | undefined;
  readonly taughtAgain?: { readonly count: number } | undefined;
}

/** A rule taught two times or more that `MEMORY.md` does not list after the last run. */
export interface RuleMiss {
  readonly conversation: string;
  /** Its wordings, as taught. */
  readonly texts: readonly string[];
  /** Times memory says it was taught again. */
  readonly counted: number;
}

export interface RuleFigures {
  /** Planted rules (`dreamd_rules`), and those memory holds as taught again (count ≥ 1): the repeat-correction rate. */
  readonly rules: number;
  readonly taughtAgain: number;
  /** Teachings after the first, planted, and the times memory counted (summed over the rules). */
  readonly reteachesPlanted: number;
  readonly reteachesCounted: number;
  /** Rules taught two times or more, and those the always-loaded `MEMORY.md` lists. */
  readonly taughtTwice: number;
  readonly taughtTwiceInIndex: number;
  readonly misses: readonly RuleMiss[];
}

/**
 * Each planted rule judged on the memory the runs left: the active facts holding one of its wordings, the most
 * times any of them was counted as taught again, and whether `MEMORY.md` (`index`, the whole file) links one
 * of them (a topic file's `#id` or a fact file's name).
 */
export function ruleFigures(
  conversation: string,
  groups: readonly (readonly string[])[],
  facts: readonly ReferenceFact[],
  memory: readonly RuleHolder[],
  index: string,
): RuleFigures {
  const textOf = new Map(facts.map((fact) => [fact.turn, fact.text]));
  let taughtAgain = 0;
  let reteachesPlanted = 0;
  let reteachesCounted = 0;
  let taughtTwice = 0;
  let taughtTwiceInIndex = 0;
  const misses: RuleMiss[] = [];
  for (const group of groups) {
    const texts = [...new Set(group.map((turn) => textOf.get(turn)))].filter(
      (text): text is string => text !== undefined,
    );
    if (texts.length === 0)
      throw new Error(`${conversation}: dreamd_rules names turns without a reference fact`);
    const holders = memory.filter(
      (fact) => fact.status === 'active' && texts.some((text) => fact.body.includes(text)),
    );
    const counted = Math.max(0, ...holders.map((fact) => fact.taughtAgain?.count ?? 0));
    if (counted > 0) taughtAgain += 1;
    reteachesPlanted += group.length - 1;
    reteachesCounted += counted;
    if (group.length < 2) continue;
    taughtTwice += 1;
    const listed = holders.some(
      (fact) =>
        index.includes(`#${fact.id})`) || (fact.file !== undefined && index.includes(`(${fact.file})`)),
    );
    if (listed) taughtTwiceInIndex += 1;
    else misses.push({ conversation, texts, counted });
  }
  return {
    rules: groups.length,
    taughtAgain,
    reteachesPlanted,
    reteachesCounted,
    taughtTwice,
    taughtTwiceInIndex,
    misses,
  };
}

/** Words two texts of a reworded update share at most: the person's name. */
export const REWORDED_SHARED_WORDS = 1;

/**
 * Whether a chain (turn ids, oldest first) holds a link whose two texts share at most
 * {@link REWORDED_SHARED_WORDS} word ("Priya works as a nurse at St Mary's." → "Priya left the hospital; she is a
 * data analyst at Monzo now."): only the name, so no word match shows the older fact.
 */
export function isReworded(chain: readonly string[], textOf: ReadonlyMap<string, string>): boolean {
  return chain.slice(1).some((newer, index) => {
    const older = wordsOf(textOf.get(chain[index]!) ?? '');
    const shared = [...wordsOf(textOf.get(newer) ?? '')].filter((word) => older.has(word));
    return shared.length <= REWORDED_SHARED_WORDS;
  });
}
