import type { Fact, FactType } from '../memory/types.js';
import { clean, compareCandidates, compareStrings, uniqueSorted, type Candidate } from './candidate.js';
import type { ExtractedFact } from './extraction.js';

export { cleanTitle, parseDay } from './candidate.js';
import { screenCandidates } from './screen-candidates.js';
import {
  NEAR_DUPLICATE_THRESHOLD,
  SAME_SUBJECT_MIN_TITLE_WORDS,
  SAME_SUBJECT_THRESHOLD,
  exactKey,
  normalizeText,
  textSimilarity,
  titleSimilarity,
  titleWordCount,
} from './similarity.js';

/**
 * Step 5 of a consolidation run: merge the model's candidate facts into the current facts. Pure: the ids, the
 * forgotten list and the secret scanner come in as functions; nothing here reads a clock, a file or the network.
 *
 * Each candidate, after cleaning, goes through these checks in order; the first that applies decides:
 *   1. dropped: empty title or body, a date that is not a date, or a fact a person told dreamd to forget;
 *   2. quarantined: it carries a secret, reads as an instruction to an AI or to the memory system, or is a rule
 *      whose only evidence is text the agent read (see {@link screenCandidates});
 *   3. exact duplicate (same type, same normalised body) of an active fact: merged into it;
 *   4. `replaces` names facts that exist (followed to the newest fact of their supersede chain): the candidate
 *      becomes a new fact and they are superseded by it; if one of them was observed later than the candidate,
 *      the candidate is instead recorded as superseded by that newer fact (the newest observation wins);
 *   5. near duplicate (same type, {@link textSimilarity} ≥ {@link NEAR_DUPLICATE_THRESHOLD}) of an active fact:
 *      merged into it;
 *   6. same subject (same type, titles alike, see {@link SAME_SUBJECT_THRESHOLD}) but different content: the
 *      newer of the two stays active and the other is superseded by it;
 *   7. otherwise: added.
 *
 * Merging unions the sources, keeps the earliest `observed` and the latest `updated`, and keeps the text of the
 * newest observation (`updated` is the date the current text was last observed). On the same day the longer,
 * more detailed text wins, and after that a fixed text order, so arrival order never decides.
 *
 * Nothing is deleted: a replaced fact stays in the set with `status: 'superseded'`, `supersededBy` and
 * `supersededOn` (the date the newer text was observed). A fact edited by hand is never rewritten: a duplicate
 * only adds its sources to it, and a candidate that would replace it is added next to it (reported in `linked`).
 *
 * Candidates are applied oldest first (then by a key made of their content), so a batch gives the same result in
 * any order, and runs over sessions in any order end with the same active facts (same types, titles, bodies and
 * rules; ids, sources and dates of the history may differ).
 */

/** The part of a candidate the forgotten list is matched against. */
export interface ForgettableFact {
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
}

export interface ReconcileInput {
  /** Every fact now in memory, active and superseded. */
  readonly existing: readonly Fact[];
  /** The model's candidates, in any order. */
  readonly candidates: readonly ExtractedFact[];
  /** Date of the run, `YYYY-MM-DD`: observed dates later than it are brought back to it. */
  readonly today: string;
  /** A fresh fact id (`f-` + 10 base32 characters), never one in use. */
  readonly newId: () => string;
  /** True for a fact a person removed with `dreamd memory forget`: it must not be learned again. */
  readonly isForgotten: (fact: ForgettableFact) => boolean;
  /** True when a text holds a secret (key, token, password …). */
  readonly containsSecret: (text: string) => boolean;
}

export interface CandidateVerdict {
  readonly candidate: ExtractedFact;
  readonly reason: string;
}

export interface ReconcileResult {
  /** The full next set of facts: the existing ones (updated or superseded in place, same order), then new ones. */
  readonly facts: Fact[];
  /** New active facts. */
  readonly added: Fact[];
  /** Existing facts whose content or metadata changed (sources, dates, text), before and after. */
  readonly updated: { readonly before: Fact; readonly after: Fact }[];
  /** Facts superseded in this reconcile, existing or recorded now, with the fact that superseded them. */
  readonly superseded: { readonly fact: Fact; readonly by: Fact }[];
  /** New facts that would have replaced a fact edited by hand; both stay active for a person to settle. */
  readonly linked: { readonly fact: Fact; readonly handEdited: Fact }[];
  /** Held back for a person to review (`.dreamd/quarantine.md`): secrets and instruction-like text. */
  readonly quarantined: CandidateVerdict[];
  /** Not kept: empty, undated, or forgotten. */
  readonly dropped: CandidateVerdict[];
}

/** The fields that make up what a fact says, with the date that text was observed. */
interface Text {
  readonly date: string;
  readonly title: string;
  readonly body: string;
  readonly why: string | undefined;
  readonly howToApply: string | undefined;
}

/** Longest supersede chain followed from an id in `replaces`; guards against a cycle in hand-edited files. */
const MAX_CHAIN = 100;

function textOf(fact: Fact): Text {
  return {
    date: fact.updated,
    title: fact.title,
    body: fact.body,
    why: fact.why,
    howToApply: fact.howToApply,
  };
}

function candidateText(candidate: Candidate): Text {
  return {
    date: candidate.observed,
    title: candidate.title,
    body: candidate.body,
    why: candidate.why,
    howToApply: candidate.howToApply,
  };
}

function sameText(a: Text, b: Text): boolean {
  return a.title === b.title && a.body === b.body && a.why === b.why && a.howToApply === b.howToApply;
}

/**
 * Whether text `a` should win over text `b`: observed later; on the same day the longer body (more detail);
 * then a fixed order of the text itself. Strict: equal texts never outrank each other.
 */
function outranks(a: Text, b: Text): boolean {
  if (a.date !== b.date) return a.date > b.date;
  if (a.body.length !== b.body.length) return a.body.length > b.body.length;
  const order =
    compareStrings(normalizeText(a.body), normalizeText(b.body)) ||
    compareStrings(normalizeText(a.title), normalizeText(b.title)) ||
    compareStrings(a.body, b.body) ||
    compareStrings(a.title, b.title) ||
    compareStrings(a.why ?? '', b.why ?? '') ||
    compareStrings(a.howToApply ?? '', b.howToApply ?? '');
  return order > 0;
}

function sameSources(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((source, index) => source === b[index]);
}

/** The working set of one reconcile: facts by id in their original order, and what happened to them. */
class FactSet {
  readonly facts = new Map<string, Fact>();
  readonly linked: { fact: Fact; handEdited: Fact }[] = [];

  constructor(
    existing: readonly Fact[],
    private readonly newId: () => string,
  ) {
    for (const fact of existing) this.facts.set(fact.id, fact);
  }

  apply(candidate: Candidate): void {
    const active = [...this.facts.values()].filter(
      (fact) => fact.status === 'active' && fact.type === candidate.type,
    );

    const exact = active.find((fact) => exactKey(fact.type, fact.body) === candidate.key);
    if (exact !== undefined) return this.merge(exact, candidate);

    const targets = this.resolveReplaces(candidate.replaces);
    if (targets.length > 0) return this.replace(targets, candidate, 'named');

    const near = best(active, (fact) =>
      textSimilarity([fact.title, fact.body], [candidate.title, candidate.body]),
    );
    if (near !== undefined && near.score >= NEAR_DUPLICATE_THRESHOLD) return this.merge(near.fact, candidate);

    if (titleWordCount(candidate.title) >= SAME_SUBJECT_MIN_TITLE_WORDS) {
      const subject = best(active, (fact) => titleSimilarity(fact.title, candidate.title));
      if (subject !== undefined && subject.score >= SAME_SUBJECT_THRESHOLD) {
        return this.replace([subject.fact], candidate, 'same-subject');
      }
    }

    this.create(candidate, undefined);
  }

  /** Active facts named by `replaces`, each followed along its supersede chain to the newest; unknown ids ignored. */
  private resolveReplaces(ids: readonly string[]): Fact[] {
    const heads = new Map<string, Fact>();
    for (const id of ids) {
      let fact = this.facts.get(id);
      for (let step = 0; fact !== undefined && fact.status === 'superseded' && step < MAX_CHAIN; step += 1) {
        fact = fact.supersededBy === undefined ? undefined : this.facts.get(fact.supersededBy);
      }
      if (fact !== undefined && fact.status === 'active') heads.set(fact.id, fact);
    }
    return [...heads.values()];
  }

  /**
   * The candidate replaces `targets`, unless one of them is newer: then the candidate is the stale one. Targets
   * the model `named` lose to a candidate of the same day (the model read both and said which is current); a
   * `same-subject` match is settled by {@link outranks}, the same way in whichever order the two arrive.
   */
  private replace(targets: readonly Fact[], candidate: Candidate, how: 'named' | 'same-subject'): void {
    const text = candidateText(candidate);
    const newer = targets.filter((target) =>
      how === 'named' ? target.updated > candidate.observed : outranks(textOf(target), text),
    );
    const newest = newer.reduce<Fact | undefined>(
      (kept, target) => (kept === undefined || outranks(textOf(target), textOf(kept)) ? target : kept),
      undefined,
    );
    if (newest !== undefined) return this.recordStale(candidate, newest);

    const fact = this.create(candidate, undefined);
    for (const target of targets) {
      if (target.editedByHand) this.linked.push({ fact, handEdited: target });
      else this.supersede(target, fact);
    }
  }

  /**
   * Keeps a trace of a candidate older than the fact that replaced it: merged into an earlier trace of the same
   * text when there is one, else recorded as a new superseded fact.
   */
  private recordStale(candidate: Candidate, newer: Fact): void {
    const trace = [...this.facts.values()].find(
      (fact) =>
        fact.status === 'superseded' &&
        fact.supersededBy === newer.id &&
        fact.type === candidate.type &&
        (exactKey(fact.type, fact.body) === candidate.key ||
          textSimilarity([fact.title, fact.body], [candidate.title, candidate.body]) >=
            NEAR_DUPLICATE_THRESHOLD),
    );
    if (trace !== undefined) return this.merge(trace, candidate);
    this.create(candidate, newer);
  }

  private merge(fact: Fact, candidate: Candidate): void {
    const sources = uniqueSorted([...fact.sources, ...candidate.sources]);
    if (fact.editedByHand) {
      if (!sameSources(sources, fact.sources)) this.facts.set(fact.id, { ...fact, sources });
      return;
    }
    const incoming = candidateText(candidate);
    const takeText = !sameText(incoming, textOf(fact)) && outranks(incoming, textOf(fact));
    const next: Fact = {
      ...fact,
      ...(takeText
        ? { title: incoming.title, body: incoming.body, why: incoming.why, howToApply: incoming.howToApply }
        : {}),
      sources,
      observed: candidate.observed < fact.observed ? candidate.observed : fact.observed,
      updated: candidate.observed > fact.updated ? candidate.observed : fact.updated,
    };
    const changed =
      takeText ||
      !sameSources(sources, fact.sources) ||
      next.observed !== fact.observed ||
      next.updated !== fact.updated;
    if (changed) this.facts.set(fact.id, next);
  }

  private supersede(fact: Fact, by: Fact): void {
    this.facts.set(fact.id, { ...fact, status: 'superseded', supersededBy: by.id, supersededOn: by.updated });
  }

  /** A new fact from the candidate: active, or already superseded by `supersededBy` when it is stale. */
  private create(candidate: Candidate, supersededBy: Fact | undefined): Fact {
    const fact: Fact = {
      id: this.freshId(),
      type: candidate.type,
      title: candidate.title,
      body: candidate.body,
      why: candidate.why,
      howToApply: candidate.howToApply,
      observed: candidate.observed,
      updated: candidate.observed,
      sources: candidate.sources,
      status: supersededBy === undefined ? 'active' : 'superseded',
      supersededBy: supersededBy?.id,
      supersededOn: supersededBy?.updated,
      editedByHand: false,
    };
    this.facts.set(fact.id, fact);
    return fact;
  }

  private freshId(): string {
    for (let attempt = 0; attempt < MAX_CHAIN; attempt += 1) {
      const id = this.newId();
      if (!this.facts.has(id)) return id;
    }
    throw new Error(`newId() returned ids already in use ${MAX_CHAIN} times in a row`);
  }
}

/** The highest-scoring fact; ties go to the smaller normalised text, so the pick never depends on order. */
function best(
  facts: readonly Fact[],
  score: (fact: Fact) => number,
): { fact: Fact; score: number } | undefined {
  let top: { fact: Fact; score: number; key: string } | undefined;
  for (const fact of facts) {
    const value = score(fact);
    const key = `${normalizeText(fact.title)}\n${normalizeText(fact.body)}\n${fact.id}`;
    if (top === undefined || value > top.score || (value === top.score && key < top.key)) {
      top = { fact, score: value, key };
    }
  }
  return top === undefined ? undefined : { fact: top.fact, score: top.score };
}

/** Merges candidate facts into the existing ones. See the module comment for the rules. */
export function reconcile(input: ReconcileInput): ReconcileResult {
  const quarantined: CandidateVerdict[] = [];
  const dropped: CandidateVerdict[] = [];
  const accepted: Candidate[] = [];
  const screened = screenCandidates(input.candidates, { containsSecret: input.containsSecret });

  for (const original of input.candidates) {
    const cleaned = clean(original, input.today);
    if (typeof cleaned === 'string') {
      dropped.push({ candidate: original, reason: cleaned });
      continue;
    }
    if (input.isForgotten({ type: cleaned.type, title: cleaned.title, body: cleaned.body })) {
      dropped.push({ candidate: original, reason: 'forgotten: a person asked dreamd to forget this fact' });
      continue;
    }
    const heldBack = screened.get(original);
    if (heldBack !== undefined) {
      quarantined.push({ candidate: original, reason: heldBack });
      continue;
    }
    accepted.push(cleaned);
  }

  const set = new FactSet(input.existing, input.newId);
  for (const candidate of accepted.sort(compareCandidates)) set.apply(candidate);

  const before = new Map(input.existing.map((fact) => [fact.id, fact]));
  const facts = [...set.facts.values()];
  const added: Fact[] = [];
  const updated: { before: Fact; after: Fact }[] = [];
  const superseded: { fact: Fact; by: Fact }[] = [];
  for (const fact of facts) {
    const previous = before.get(fact.id);
    const newlySuperseded = fact.status === 'superseded' && previous?.status !== 'superseded';
    if (newlySuperseded) {
      const by = fact.supersededBy === undefined ? undefined : set.facts.get(fact.supersededBy);
      if (by !== undefined) superseded.push({ fact, by });
    } else if (previous === undefined) {
      added.push(fact);
    } else if (previous !== fact) {
      updated.push({ before: previous, after: fact });
    }
  }
  const linked = set.linked.map(({ fact, handEdited }) => ({
    fact: set.facts.get(fact.id) ?? fact,
    handEdited: set.facts.get(handEdited.id) ?? handEdited,
  }));

  return { facts, added, updated, superseded, linked, quarantined, dropped };
}
