import { FACT_TYPES, type Fact, type FactType } from '../../memory/types.js';
import { addTaughtAgain, type TaughtAgain } from '../../memory/taught-again.js';
import { clean, compareCandidates, compareStrings, uniqueSorted, type Candidate } from './candidate.js';
import type { ExtractedFact } from '../extraction/extraction.js';

export { cleanTitle, parseDay } from './candidate.js';
import { FactLookup } from './fact-lookup.js';
import {
  detailsOf,
  featuresOf,
  sameNamesAndNumbers,
  sharedCount,
  type FactFeatures,
} from '../facts/features.js';
import type { Provenance } from '../../screen/provenance.js';
import { addsInsideACompound, createRewordingLookup, isRewording, rewordingTerms } from './rewording.js';
import { isReadEvidence, screenCandidates } from '../../screen/screen-candidates.js';
import { contentWords, jaccard, normalizeText } from '../facts/similarity.js';
import { NEAR_DUPLICATE_THRESHOLD } from '../facts/tunables.js';
import { MAX_CHAIN, NEAR_WORDS_BOUND } from './tunables.js';
import { factKey } from '../facts/fact-ids.js';

/**
 * Step 5 of a consolidation run: merge the model's candidate facts into the current facts. Pure: the ids, the
 * forgotten list and the secret scanner come in as functions; nothing here reads a clock, a file or the network.
 *
 * Each candidate, after cleaning, goes through these checks in order; the first that applies decides:
 *   1. dropped: empty title or body, a date that is not a date, or a fact a person told dreamd to forget;
 *   2. quarantined: it carries a secret, reads as an instruction to an AI or to the memory system, or is a rule
 *      whose only evidence is text the agent read (see {@link screenCandidates}); or it says in other words
 *      (`rewording.ts`) what a fact held back in this run or an earlier one says: it is held back with it;
 *   3. exact duplicate (same normalised body, same names and numbers) of an active fact: merged into it. The
 *      same fact filed under another type is one fact too: it stays in the type of the earlier observation
 *      (same day: the first of user, feedback, project, reference), whichever arrived first;
 *   4. `replaces` names facts that exist (followed to the newest fact of their supersede chain): the candidate
 *      becomes a new fact and they are superseded by it; if one of them was observed later than the candidate,
 *      the candidate is instead recorded as superseded by that newer fact (the newest observation wins). This is
 *      the main signal: the model read both facts and said they are one subject. For a fact returned earlier in
 *      the same answer, which has no id yet, the model names its exact title;
 *   5. near duplicate (same type, word and word-pair similarity ≥ {@link NEAR_DUPLICATE_THRESHOLD}, same names
 *      and numbers) of an active fact that says the same (no word swapped, none added inside what both say,
 *      see `saysTheSame`): merged into it; or a rewording of one, of any type (the same fact in other words: reordered, a synonym, see
 *      `rewording.ts`, never an added word): merged into it, in the type rule 3 keeps;
 *   6. otherwise: added. Two facts alike but for a word ("include a digit in function names" / "… in function
 *      argument names", "use try statements in methods" / "… in functions", leeks then fennel on one plot) may
 *      be one subject with a new value or two subjects: code cannot tell, so it neither merges nor retires
 *      either. The update check (`update-check.ts`) shows such a pair to the model, whose `replaces` decides.
 *
 * Merging unions the sources, keeps the earliest `observed` and the latest `updated`, and keeps the text of the
 * newest observation. A merge (rules 3 and 5) into a fact memory held before this reconcile, from a session that
 * started after that fact was saved ({@link ReconcileInput.taughtAfterSaved}) and is not among its sources yet,
 * counts as the fact taught again (`taughtAgain`, see `memory/taught-again.ts`): memory held the rule and the
 * agent did not apply it. A session counts once, so a run done twice counts nothing twice. The text of the
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
 *
 * "Same names and numbers" (`features.ts`): pure-code rules never join two facts that name different people,
 * places, products or numbers. Time: each fact's features are computed once and the lookups go through
 * `FactLookup`, so a reconcile is near-linear in the number of facts (`bench/figures/reconcile.ts`).
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
  /**
   * The id of a new fact (`f-` + 10 base32 characters) made from what `key` names: a candidate's whole content,
   * so a run that reconciles the same candidates again (a re-plan) may give them the same ids (`fact-ids.ts`).
   * An id already in use is asked for again with another key.
   */
  readonly newId: (key: string) => string;
  /** True for a fact a person removed with `dreamd memory forget`: it must not be learned again. */
  readonly isForgotten: (fact: ForgettableFact) => boolean;
  /** True when a text holds a secret (key, token, password …). */
  readonly containsSecret: (text: string) => boolean;
  /** Where each candidate's words sit in the run's digest (see `provenance.ts`); omitted: the model's label. */
  readonly provenance?: Provenance | undefined;
  /**
   * Facts held back earlier (`.dreamd/quarantine.md`), with why: a candidate that says one of them in other
   * words is held back with it. Omitted: none.
   */
  readonly held?: readonly HeldFact[] | undefined;
  /**
   * Whether session `sessionId` started after `fact` (one of `existing`, as it was) was saved: a candidate of
   * that session merged into the fact taught it again. Omitted: nothing counts as taught again.
   */
  readonly taughtAfterSaved?: ((fact: Fact, sessionId: string) => boolean) | undefined;
}

/** A fact held back for a person, and why. */
export interface HeldFact {
  readonly title: string;
  readonly body: string;
  readonly reason: string;
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

/** The `description` field of a fact, present only when there is one (a fact without it keeps its shape). */
function withDescription(description: string | undefined): { description?: string } {
  return description === undefined ? {} : { description };
}

/** The text fields of a fact or a candidate with the date they hold from: one shape for `outranks` to compare. */
function datedText(
  date: string,
  text: {
    readonly title: string;
    readonly body: string;
    readonly why?: string | undefined;
    readonly howToApply?: string | undefined;
  },
): Text {
  return { date, title: text.title, body: text.body, why: text.why, howToApply: text.howToApply };
}

function textOf(fact: Fact): Text {
  return datedText(fact.updated, fact);
}

function candidateText(candidate: Candidate): Text {
  return datedText(candidate.observed, candidate);
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
  private readonly index: FactLookup;
  /** Fact each candidate of this batch became, by type and normalised title: `replaces` may name a title. */
  private readonly batchTitles = new Map<string, string>();

  /** The facts memory held before this reconcile, as they were: what a session may have taught again. */
  private readonly saved = new Map<string, Fact>();

  constructor(
    existing: readonly Fact[],
    candidates: readonly Candidate[],
    private readonly newId: (key: string) => string,
    private readonly taughtAfterSaved: ReconcileInput['taughtAfterSaved'],
  ) {
    const words = new Set<string>();
    const keys = new Set<string>();
    const numbersKeys = new Set<string>();
    const terms = new Set<string>();
    for (const candidate of candidates) {
      const features = featuresOf(candidate);
      keys.add(features.key);
      numbersKeys.add(features.numbersKey);
      for (const word of features.words) words.add(word);
      for (const term of rewordingTerms(candidate)) terms.add(term);
    }
    this.index = new FactLookup((id) => this.facts.get(id), { words, keys, numbersKeys, terms });
    for (const fact of existing) {
      this.facts.set(fact.id, fact);
      this.saved.set(fact.id, fact);
      this.index.add(fact);
    }
  }

  /**
   * `fact`'s record after `candidate` is merged into it: the candidate's sessions that started after the fact
   * was saved and are not among its sources yet taught it again on the candidate's date. Unchanged otherwise.
   */
  private taughtAgain(fact: Fact, candidate: Candidate): TaughtAgain | undefined {
    const saved = this.saved.get(fact.id);
    const counts = saved?.status === 'active' && fact.status === 'active' && fact.owner !== 'other';
    if (saved === undefined || !counts || this.taughtAfterSaved === undefined) return fact.taughtAgain;
    const sessions = candidate.sources.filter(
      (session) => !fact.sources.includes(session) && this.taughtAfterSaved?.(saved, session) === true,
    );
    return sessions.length === 0
      ? fact.taughtAgain
      : addTaughtAgain(fact.taughtAgain, sessions, candidate.observed);
  }

  apply(candidate: Candidate): void {
    const features = featuresOf(candidate);

    const exact = this.exactDuplicate(candidate, features);
    if (exact !== undefined) {
      return exact.type === candidate.type || keepsItsType(exact, candidate)
        ? this.merge(exact, candidate)
        : this.moveToType(exact, candidate);
    }

    const targets = this.resolveReplaces(candidate.type, candidate.replaces);
    if (targets.length > 0) return this.replace(targets, candidate);

    // Alike, but one says a thing the other does not ("function names" / "function argument names", fennel then
    // peas): another subject or a new value, which only a model shown both may tell apart. Code merges only
    // what says the same, and never retires a fact: the update check shows such a pair to the model.
    const near = this.nearDuplicate(candidate, features);
    if (near !== undefined && saysTheSame(near, candidate)) return this.merge(near, candidate);

    const reworded = this.rewording(candidate, features);
    if (reworded !== undefined) {
      return reworded.type === candidate.type || keepsItsType(reworded, candidate)
        ? this.merge(reworded, candidate)
        : this.moveToType(reworded, candidate);
    }

    this.create(candidate, undefined);
  }

  /**
   * An active fact with the same normalised body and the same names: of the candidate's type when there is one,
   * else of any type (the same fact filed under two types is one fact).
   */
  private exactDuplicate(candidate: Candidate, features: FactFeatures): Fact | undefined {
    const matches = this.index.exact(features.key).filter((fact) => sameNamesAndNumbers(fact, candidate));
    const sameType = matches.filter((fact) => fact.type === candidate.type);
    return best(sameType.length > 0 ? sameType : matches, () => 1)?.fact;
  }

  /** The most similar active fact of the type at or above the near-duplicate threshold, naming the same things. */
  private nearDuplicate(candidate: Candidate, features: FactFeatures): Fact | undefined {
    const found: Fact[] = [];
    const scores = new Map<Fact, number>();
    const own = detailsOf(candidate).words;
    for (const fact of this.index.mayShare(
      candidate.type,
      features.numbersKey,
      'words',
      features.words,
      NEAR_WORDS_BOUND,
    )) {
      const other = featuresOf(fact);
      const shared = sharedCount(other.words, own);
      const words = shared / (own.size + other.distinctWords - shared);
      // The score is the mean of the word and the pair Jaccard. Two texts share fewer pairs than words (a shared
      // pair needs two shared words), so the pair Jaccard stays under the word Jaccard but for repeated words:
      // a word overlap under NEAR_WORDS_BOUND cannot reach the threshold, and the pairs are not computed.
      if (words < NEAR_WORDS_BOUND) continue;
      const score = (words + jaccard(detailsOf(candidate).pairs, detailsOf(fact).pairs)) / 2;
      if (score < NEAR_DUPLICATE_THRESHOLD || !sameNamesAndNumbers(candidate, fact)) continue;
      found.push(fact);
      scores.set(fact, score);
    }
    return best(found, (fact) => scores.get(fact) ?? 0)?.fact;
  }

  /**
   * An active fact that says what the candidate says in other words ({@link isRewording}): of the candidate's
   * type when there is one, else of any type, like an exact duplicate.
   */
  private rewording(candidate: Candidate, features: FactFeatures): Fact | undefined {
    // No added term: "function names" and "function argument names" are two rules (see `isRewording`).
    const found = [...this.index.mayReword(features.numbersKey, rewordingTerms(candidate))].filter((fact) =>
      isRewording(candidate, fact, { addedTerms: false }),
    );
    const sameType = found.filter((fact) => fact.type === candidate.type);
    return best(sameType.length > 0 ? sameType : found, () => 1)?.fact;
  }

  /**
   * Active facts named by `replaces`, each followed along its supersede chain to the newest; unknown ids ignored.
   * An entry that is no id but the exact title of a fact of the same type returned earlier in this batch names
   * that fact (the model cannot know the id of a fact it is returning in the same answer).
   */
  private resolveReplaces(type: FactType, ids: readonly string[]): Fact[] {
    const heads = new Map<string, Fact>();
    for (const id of ids) {
      let fact = this.facts.get(id) ?? this.facts.get(this.batchTitles.get(titleKey(type, id)) ?? '');
      for (let step = 0; fact !== undefined && fact.status === 'superseded' && step < MAX_CHAIN; step += 1) {
        fact = fact.supersededBy === undefined ? undefined : this.facts.get(fact.supersededBy);
      }
      if (fact !== undefined && fact.status === 'active') heads.set(fact.id, fact);
    }
    return [...heads.values()];
  }

  /**
   * The candidate replaces `targets` (the model named them), unless one of them is newer: then the candidate is
   * the stale one. Targets lose to a candidate of the same day (the model read both and said which is current).
   */
  private replace(targets: readonly Fact[], candidate: Candidate): void {
    const newer = targets.filter((target) => target.updated > candidate.observed);
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
    const features = featuresOf(candidate);
    const trace = this.index.supersededBy(newer.id).find((fact) => {
      if (fact.type !== candidate.type) return false;
      const other = featuresOf(fact);
      if (!sameNamesAndNumbers(candidate, fact)) return false;
      if (other.key === features.key) return true;
      const pairs = jaccard(detailsOf(candidate).pairs, detailsOf(fact).pairs);
      const score = (jaccard(detailsOf(candidate).words, detailsOf(fact).words) + pairs) / 2;
      return score >= NEAR_DUPLICATE_THRESHOLD;
    });
    if (trace !== undefined) return this.merge(trace, candidate);
    this.create(candidate, newer);
  }

  private merge(fact: Fact, candidate: Candidate): void {
    this.batchTitles.set(titleKey(candidate.type, candidate.title), fact.id);
    const sources = uniqueSorted([...fact.sources, ...candidate.sources]);
    const taughtAgain = this.taughtAgain(fact, candidate);
    const again = taughtAgain === undefined ? {} : { taughtAgain };
    if (fact.editedByHand) {
      if (!sameSources(sources, fact.sources)) this.put({ ...fact, ...again, sources });
      return;
    }
    const incoming = candidateText(candidate);
    const takeText = !sameText(incoming, textOf(fact)) && outranks(incoming, textOf(fact));
    // New text takes the description written with it (or none): an old one may describe the old text.
    const { description: _described, ...undescribed } = fact;
    const next: Fact = {
      ...(takeText ? undescribed : fact),
      ...(takeText
        ? { title: incoming.title, body: incoming.body, why: incoming.why, howToApply: incoming.howToApply }
        : {}),
      ...withDescription(
        takeText || fact.description === undefined ? candidate.description : fact.description,
      ),
      ...again,
      sources,
      observed: candidate.observed < fact.observed ? candidate.observed : fact.observed,
      updated: candidate.observed > fact.updated ? candidate.observed : fact.updated,
    };
    const changed =
      takeText ||
      next.taughtAgain !== fact.taughtAgain ||
      next.description !== fact.description ||
      !sameSources(sources, fact.sources) ||
      next.observed !== fact.observed ||
      next.updated !== fact.updated;
    if (changed) this.put(next);
  }

  /**
   * The candidate says what `fact` says under another type, and its type is the one to keep (see
   * {@link keepsItsType}): a fact of the candidate's type takes over the sources and dates of both and
   * supersedes `fact`, so one fact remains, in the same type whatever order the two arrived in.
   */
  private moveToType(fact: Fact, candidate: Candidate): void {
    const taughtAgain = this.taughtAgain(fact, candidate);
    const created = this.create(candidate, undefined);
    const incoming = candidateText(candidate);
    const existing = textOf(fact);
    const text = outranks(existing, incoming) ? existing : incoming;
    const moved: Fact = {
      ...created,
      title: text.title,
      body: text.body,
      why: text.why,
      howToApply: text.howToApply,
      ...withDescription(
        text === existing ? (fact.description ?? candidate.description) : candidate.description,
      ),
      sources: uniqueSorted([...fact.sources, ...candidate.sources]),
      ...(taughtAgain === undefined ? {} : { taughtAgain }),
      observed: fact.observed < candidate.observed ? fact.observed : candidate.observed,
      updated: fact.updated > candidate.observed ? fact.updated : candidate.observed,
    };
    this.put(moved);
    this.supersede(fact, moved);
  }

  private supersede(fact: Fact, by: Fact): void {
    this.put({ ...fact, status: 'superseded', supersededBy: by.id, supersededOn: by.updated });
  }

  /** A new fact from the candidate: active, or already superseded by `supersededBy` when it is stale. */
  private create(candidate: Candidate, supersededBy: Fact | undefined): Fact {
    const fact: Fact = {
      id: this.freshId(candidateKey(candidate)),
      type: candidate.type,
      title: candidate.title,
      body: candidate.body,
      why: candidate.why,
      howToApply: candidate.howToApply,
      ...withDescription(candidate.description),
      observed: candidate.observed,
      updated: candidate.observed,
      sources: candidate.sources,
      status: supersededBy === undefined ? 'active' : 'superseded',
      supersededBy: supersededBy?.id,
      supersededOn: supersededBy?.updated,
      editedByHand: false,
    };
    this.put(fact);
    this.batchTitles.set(titleKey(candidate.type, candidate.title), fact.id);
    return fact;
  }

  /** Stores a new version of a fact and keeps the indexes in step. */
  private put(fact: Fact): void {
    this.facts.set(fact.id, fact);
    this.index.add(fact);
  }

  /** A new id for `key`; when it is in use, the id of the key numbered by the attempt (still one per key). */
  private freshId(key: string): string {
    for (let attempt = 0; attempt < MAX_CHAIN; attempt += 1) {
      const id = this.newId(attempt === 0 ? key : `${key}\n#${attempt}`);
      if (!this.facts.has(id)) return id;
    }
    throw new Error(`newId() returned ids already in use ${MAX_CHAIN} times in a row`);
  }
}

/**
 * Everything a candidate says, its dates and sources: the key of the fact it creates (see `newId`). Not what it
 * replaces: the update check can add to that between a run's draft and its plan, and the fact keeps its id
 * through both (curation names it by the draft's).
 */
function candidateKey(candidate: Candidate): string {
  return factKey(
    'candidate',
    candidate,
    candidate.description ?? null,
    candidate.observed,
    candidate.sources,
  );
}

/**
 * Whether the near-duplicate rule may merge two alike bodies: no content word swapped for another ("methods" /
 * "functions", fennel then peas), and none added inside two words the other says side by side ("function
 * argument names" is another thing than "function names", see `addsInsideACompound`); a word added around what
 * both say ("… with oat milk, please", "… as planned") is the same fact said at more length.
 */
function saysTheSame(fact: Fact, candidate: Candidate): boolean {
  const a = new Set(contentWords(fact.body));
  const b = new Set(contentWords(candidate.body));
  const swapped = [...a].some((word) => !b.has(word)) && [...b].some((word) => !a.has(word));
  return !swapped && !addsInsideACompound(fact, candidate);
}

function titleKey(type: FactType, title: string): string {
  return `${type}\n${normalizeText(title)}`;
}

/**
 * Of an exact duplicate filed under another type, whether the existing fact keeps its type: the type of the
 * earlier observation wins, on the same day the first in `FACT_TYPES` order; a fact edited by hand always keeps
 * its own. Either way the choice depends only on the two facts, never on which arrived first.
 */
function keepsItsType(fact: Fact, candidate: Candidate): boolean {
  if (fact.editedByHand || fact.observed !== candidate.observed) {
    return fact.editedByHand || fact.observed < candidate.observed;
  }
  return FACT_TYPES.indexOf(fact.type) <= FACT_TYPES.indexOf(candidate.type);
}

/** The highest-scoring fact; ties go to the smaller normalised text, so the pick never depends on order. */
function best(
  facts: readonly Fact[],
  score: (fact: Fact) => number,
): { fact: Fact; score: number } | undefined {
  let top: { fact: Fact; score: number; key: string } | undefined;
  for (const fact of facts) {
    const value = score(fact);
    if (top !== undefined && value < top.score) continue;
    const key = `${normalizeText(fact.title)}\n${normalizeText(fact.body)}\n${fact.type}\n${fact.id}`;
    if (top === undefined || value > top.score || key < top.key) top = { fact, score: value, key };
  }
  return top === undefined ? undefined : { fact: top.fact, score: top.score };
}

/**
 * Candidates that say in other words what a held-back fact says are held back with it (the screen judged that
 * fact; its rewording must not reach memory round it), with the reason naming both. One exception: a fact held
 * back because only text the agent read said it passes when the user's own lines say it (`fromUser`): that is
 * what the screen asks of it.
 */
function holdRewordings(
  candidates: readonly Candidate[],
  held: readonly HeldFact[],
  fromUser: (candidate: Candidate) => boolean,
): { kept: Candidate[]; held: CandidateVerdict[] } {
  if (held.length === 0) return { kept: [...candidates], held: [] };
  const mayReword = createRewordingLookup(
    held.map((fact) => ({ ...fact, why: undefined, howToApply: undefined })),
  );
  const kept: Candidate[] = [];
  const verdicts: CandidateVerdict[] = [];
  for (const candidate of candidates) {
    const twin = mayReword(candidate).find(
      (fact) => isRewording(candidate, fact) && !(isReadEvidence(fact.reason) && fromUser(candidate)),
    );
    if (twin === undefined) kept.push(candidate);
    else
      verdicts.push({
        candidate: candidate.original,
        reason: `${twin.reason} (held back with "${twin.title}", which it says in other words)`,
      });
  }
  return { kept, held: verdicts };
}

/** Merges candidate facts into the existing ones. See the module comment for the rules. */
export function reconcile(input: ReconcileInput): ReconcileResult {
  const quarantined: CandidateVerdict[] = [];
  const dropped: CandidateVerdict[] = [];
  const accepted: Candidate[] = [];
  const screened = screenCandidates(input.candidates, {
    containsSecret: input.containsSecret,
    provenance: input.provenance,
  });

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

  const passed = holdRewordings(
    accepted,
    [
      ...quarantined.map(({ candidate, reason }) => ({
        title: candidate.title,
        body: candidate.body,
        reason,
      })),
      ...(input.held ?? []),
    ],
    (candidate) => input.provenance?.originOf(candidate.original) === 'user',
  );
  quarantined.push(...passed.held);

  const set = new FactSet(input.existing, passed.kept, input.newId, input.taughtAfterSaved);
  for (const candidate of [...passed.kept].sort(compareCandidates)) set.apply(candidate);

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
