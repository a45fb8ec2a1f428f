/**
 * Curation, the run's phase after reconcile ("prune and index"): memory that stays small as it grows.
 *
 * 1. {@link curationGroups} (pure) picks the types to curate: those whose active facts of dreamd's pass
 *    `curation.maxFactsPerType` or `maxBytesPerType`, or hold `duplicateGroup` facts that say the same thing
 *    in other words. A run under budget with no near-duplicates makes no call.
 * 2. {@link curateMemory} makes one structured-output call per such type: the model rewrites the set, merging
 *    fragments into the principle they share, keeping every detail that still holds and the newest value of
 *    anything that changed, and says which facts each result replaces.
 * 3. {@link checkCuration} (pure) checks every result; a result that fails a check is refused whole and its
 *    facts stay as they are:
 *    - it replaces no fact, or a fact that is not in the set (an unknown id), or one another result replaced;
 *    - it rewrites a person's fact (a file dreamd did not write, an entry edited by hand): refused, and the
 *      fact is listed for review instead;
 *    - it crosses subjects: it merges facts that name different people (or different numbers or links of
 *      one kind of thing), or adds a name, number or link none of its facts holds;
 *    - it drops a fact: a replaced fact not declared outdated must keep its names, numbers and links and most
 *      of its words ({@link DETAIL_COVERAGE}) in the result; a fact declared outdated needs a newer fact in the
 *      same result (the newest value wins), else it is a fact lost.
 * 4. {@link applyCuration} (pure) applies the accepted results to the run's facts: a new active fact each,
 *    the facts it replaces superseded by it; the write then moves those to the archive (`space/archive.ts`).
 */
import { z } from 'zod';
import type { CurationConfig } from '../../config/schema.js';
import { MEMORY_TYPES, FACT_TYPES, type Fact, type FactType } from '../../memory/types.js';
import { addTaughtAgain, joinTaughtAgain, type TaughtAgain } from '../../memory/taught-again.js';
import {
  emptyUsage,
  type GenerateObjectRequest,
  type ModelProvider,
  type TokenUsage,
} from '../../model/types.js';
import { countUsage, createUsageTally } from '../../model/call-tally.js';
import { detailsOf, type FactText } from '../facts/features.js';
import { factKey } from '../facts/fact-ids.js';
import { contentWords, textSimilarity, titleSimilarity } from '../facts/similarity.js';
import { DETAIL_COVERAGE, MAX_MERGE_CHAIN, OUTDATED_TITLE_SIMILARITY } from './tunables.js';

export const CURATION_SCHEMA_NAME = 'curated_facts';

/** The default budgets (`CurationConfig.parse({})`), for configs built by hand. */
export const DEFAULT_CURATION: CurationConfig = {
  enabled: true,
  maxFactsPerType: 60,
  maxBytesPerType: 24_576,
  duplicateGroup: 3,
  duplicateSimilarity: 0.45,
  maxFactsPerCall: 150,
};

export type CurationTrigger = 'facts' | 'bytes' | 'duplicates';

/** One type to curate: the facts the model may rewrite, and people's facts it sees but may not. */
export interface CurationGroup {
  readonly type: FactType;
  readonly why: readonly CurationTrigger[];
  /** dreamd's active facts of the type (the newest `maxFactsPerCall`). */
  readonly facts: readonly Fact[];
  /** Active facts of the type a person wrote or edited: shown, never rewritten. */
  readonly people: readonly Fact[];
  /** Names the whole memory writes where only a name can be ({@link knownNames}); the group's own are added. */
  readonly known?: ReadonlySet<string>;
}

/** Facts dreamd may rewrite: its own, never edited by hand. */
export function isCuratable(fact: Fact): boolean {
  return (fact.owner === undefined || fact.owner === 'dreamd') && !fact.editedByHand;
}

/** UTF-8 bytes of a fact's text. */
export function factBytes(fact: FactText): number {
  return Buffer.byteLength(
    `${fact.title}\n${fact.body}\n${fact.why ?? ''}\n${fact.howToApply ?? ''}`,
    'utf8',
  );
}

/** Active facts and bytes of each type: what the budgets are measured on (and the eval's curve). */
export function activeSize(facts: readonly Fact[]): Record<FactType, { facts: number; bytes: number }> {
  const size = Object.fromEntries(FACT_TYPES.map((type) => [type, { facts: 0, bytes: 0 }])) as Record<
    FactType,
    { facts: number; bytes: number }
  >;
  for (const fact of facts) {
    if (fact.status !== 'active' || !isCuratable(fact)) continue;
    size[fact.type].facts += 1;
    size[fact.type].bytes += factBytes(fact);
  }
  return size;
}

/**
 * Facts that say the same thing as at least one other of the list (same names and numbers, similar words);
 * with `fresh`, only pairs of which one fact is fresh count.
 */
function nearDuplicates(
  facts: readonly Fact[],
  threshold: number,
  known: ReadonlySet<string>,
  fresh: ReadonlySet<string> | undefined,
): Set<string> {
  const alike = new Set<string>();
  for (let i = 0; i < facts.length; i += 1) {
    for (let j = i + 1; j < facts.length; j += 1) {
      const a = facts[i] as Fact;
      const b = facts[j] as Fact;
      if (fresh !== undefined && !fresh.has(a.id) && !fresh.has(b.id)) continue;
      if (!sameDetails(a, b, known)) continue;
      if (textSimilarity([a.title, a.body], [b.title, b.body]) < threshold) continue;
      alike.add(a.id);
      alike.add(b.id);
    }
  }
  return alike;
}

/**
 * The types a run curates, and why (see the module comment). Pure. `fresh`: ids of the facts this run added
 * or changed; given, a type is curated only when it holds one (over budget, or a fresh near-duplicate), so a
 * run that learned nothing of a type makes no call for it again.
 */
export function curationGroups(
  facts: readonly Fact[],
  config: CurationConfig,
  fresh?: ReadonlySet<string>,
): CurationGroup[] {
  if (!config.enabled) return [];
  const size = activeSize(facts);
  const groups: CurationGroup[] = [];
  const known = knownNames(facts.filter((fact) => fact.status === 'active'));
  for (const type of FACT_TYPES) {
    const active = facts.filter((fact) => fact.type === type && fact.status === 'active');
    const own = active.filter(isCuratable);
    if (own.length < 2) continue;
    if (fresh !== undefined && !own.some((fact) => fresh.has(fact.id))) continue;
    const why: CurationTrigger[] = [];
    if (size[type].facts > config.maxFactsPerType) why.push('facts');
    if (size[type].bytes > config.maxBytesPerType) why.push('bytes');
    if (
      why.length === 0 &&
      nearDuplicates(own, config.duplicateSimilarity, known, fresh).size >= config.duplicateGroup
    )
      why.push('duplicates');
    if (why.length === 0) continue;
    const newest = [...own]
      .sort((a, b) => (a.updated === b.updated ? (a.id < b.id ? -1 : 1) : a.updated < b.updated ? 1 : -1))
      .slice(0, config.maxFactsPerCall);
    groups.push({ type, why, facts: newest, people: active.filter((fact) => !isCuratable(fact)), known });
  }
  return groups;
}

const nullableText = z.preprocess((value) => value ?? null, z.string().nullable());

const CuratedResult = z.object({
  title: z.string(),
  body: z.string(),
  why: nullableText,
  howToApply: nullableText,
  replaces: z.array(z.string()).describe('Ids of the facts this one replaces (at least one).'),
  outdated: z
    .preprocess((value) => value ?? [], z.array(z.string()))
    .describe(
      'Ids among `replaces` whose value changed later: the newer fact in `replaces` holds the current one.',
    ),
});

export const CurationAnswer = z.object({
  results: z.array(CuratedResult),
  review: z
    .preprocess((value) => value ?? [], z.array(z.object({ id: z.string(), reason: z.string() })))
    .describe(
      "People's facts (marked read-only) that repeat or contradict others: listed for a person to decide.",
    ),
});
export type CurationAnswer = z.infer<typeof CurationAnswer>;
export type CuratedResult = z.infer<typeof CuratedResult>;

export const CURATION_INSTRUCTIONS = `You curate an AI agent's long-term memory so it stays small as it grows.
You get the active facts of one memory type. Rewrite the set into fewer facts:
- merge facts that say the same thing in different words, and fragments that share one principle, into one fact;
- keep every detail that still holds: every name, number, link, place, hobby, person a plan is for;
- when a value changed over time, keep the newest value and list the older facts in "outdated";
- never merge facts about different people, places, products or numbers;
- never invent: a result holds only what its facts say;
- facts marked READ-ONLY were written by a person: never replace them; list them in "review" if they repeat or contradict others.
Return only facts that change something: a fact you would keep as it is, leave out (it stays).
Each result lists in "replaces" the ids of the facts it replaces.`;

function describeForPrompt(fact: Fact, readOnly: boolean): string {
  const parts = [
    `id: ${fact.id}${readOnly ? ' (READ-ONLY)' : ''}`,
    `observed: ${fact.observed}, updated: ${fact.updated}`,
    `title: ${fact.title}`,
    `body: ${fact.body}`,
  ];
  if (fact.why !== undefined) parts.push(`why: ${fact.why}`);
  if (fact.howToApply !== undefined) parts.push(`how to apply: ${fact.howToApply}`);
  return parts.join('\n');
}

/** The prompt of one curation call (the marker lines let a scripted model read it back). */
export function curationPrompt(group: CurationGroup): string {
  return [
    `## Memory type: ${group.type} (${MEMORY_TYPES[group.type].description})`,
    `Curated because: ${group.why.join(', ')}`,
    '',
    '## Facts',
    ...group.facts.map((fact) => `<<<FACT\n${describeForPrompt(fact, false)}\nFACT>>>`),
    ...group.people.map((fact) => `<<<FACT\n${describeForPrompt(fact, true)}\nFACT>>>`),
  ].join('\n');
}

/** A result the code accepted: its text and the facts it replaces (as they were when curated). */
export interface AcceptedResult {
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
  readonly why: string | undefined;
  readonly howToApply: string | undefined;
  readonly replaces: readonly Fact[];
}

export interface CurationCheck {
  readonly accepted: readonly AcceptedResult[];
  /** Results refused, each with the reason (for the run's notes). */
  readonly refused: readonly { readonly title: string; readonly reason: string }[];
  /** People's facts the model flagged (or tried to rewrite): for `.dreamd/review.md`. */
  readonly review: readonly { readonly fact: Fact; readonly reason: string }[];
}

function emptyToUndefined(text: string | null): string | undefined {
  return text === null || text.trim() === '' ? undefined : text.trim();
}

function joined(fact: FactText): string {
  return `${fact.title}.\n${fact.body}\n${fact.why ?? ''}\n${fact.howToApply ?? ''}`;
}

/** A word folded for comparison: lower case, edge punctuation and a possessive "'s" removed. */
function token(word: string): string {
  return word
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')
    .replace(/['’]s$/u, '');
}

/** Months and weekdays are capitalised but name no subject. */
const CALENDAR = new Set(
  'january february march april may june july august september october november december monday tuesday wednesday thursday friday saturday sunday'.split(
    ' ',
  ),
);

function sentencesOf(fact: FactText): string[][] {
  return joined(fact)
    .split(/[.!?:;\n]+/)
    .map((sentence) =>
      sentence
        .trim()
        .split(/[\s,()"]+/)
        .filter((word) => word !== ''),
    );
}

/**
 * Names a fact holds, in reading order, folded: capitalised words inside a sentence, and a sentence's first
 * word when it is possessive ("Ana's") or a name `known` from elsewhere (a sentence's first word is
 * capitalised whatever it is, so alone it says nothing). Months and weekdays are left out.
 */
export function namesIn(fact: FactText, known: ReadonlySet<string> = new Set()): string[] {
  const names: string[] = [];
  for (const words of sentencesOf(fact)) {
    words.forEach((word, position) => {
      if (!/^\p{Lu}/u.test(word)) return;
      const name = token(word);
      if (name === '' || CALENDAR.has(name) || names.includes(name)) return;
      if (position > 0 || /['’]s$/u.test(word) || known.has(name)) names.push(name);
    });
  }
  return names;
}

/** Names the facts write where only a name can be (inside a sentence, possessive): to read first words by. */
export function knownNames(facts: readonly FactText[]): Set<string> {
  return new Set(facts.flatMap((fact) => namesIn(fact)));
}

/** Every word of a fact, folded: a name of one fact written by another in any position counts as kept. */
function wordsIn(fact: FactText): Set<string> {
  return new Set(
    joined(fact)
      .split(/[\s,()"]+/)
      .map(token)
      .filter((word) => word !== ''),
  );
}

/** A fact's names, numbers and links: the details no merge may lose and no result may invent. */
function specifics(fact: FactText, known: ReadonlySet<string>): string[] {
  const details = detailsOf(fact);
  return [...namesIn(fact, known), ...details.numbers, ...details.links];
}

function holds(fact: FactText, value: string): boolean {
  const details = detailsOf(fact);
  return wordsIn(fact).has(value) || details.numbers.has(value) || details.links.has(value);
}

/** What the result says that none of `facts` says: names, numbers and links. */
function invented(result: FactText, facts: readonly Fact[], known: ReadonlySet<string>): string[] {
  return specifics(result, known).filter((value) => !facts.some((fact) => holds(fact, value)));
}

/**
 * Two facts about different subjects: the first name each holds (whom or what it is about: "Ana", "Berlin")
 * differs. A fact that names nobody can join any other; two that name different people never join, the rule
 * reconcile's own merges follow (`features.ts`).
 */
function differentSubjects(a: Fact, b: Fact, known: ReadonlySet<string>): boolean {
  const x = namesIn(a, known)[0];
  const y = namesIn(b, known)[0];
  return x !== undefined && y !== undefined && x !== y;
}

/** Same subject, same numbers and links: what near-duplicates share (then they only differ in words). */
function sameDetails(a: Fact, b: Fact, known: ReadonlySet<string>): boolean {
  const x = detailsOf(a);
  const y = detailsOf(b);
  const same = (left: ReadonlySet<string>, right: ReadonlySet<string>): boolean =>
    left.size === right.size && [...left].every((value) => right.has(value));
  return !differentSubjects(a, b, known) && same(x.numbers, y.numbers) && same(x.links, y.links);
}

/** Which of the fact's details the result lost: names, numbers, links, and whether most of its words are there. */
function lostDetails(fact: Fact, result: FactText, known: ReadonlySet<string>): string[] {
  const lost = specifics(fact, known).filter((value) => !holds(result, value));
  const resultWords = new Set(
    contentWords([result.title, result.body, result.why ?? '', result.howToApply ?? ''].join(' ')),
  );
  const words = [...new Set(contentWords(`${fact.title} ${fact.body}`))];
  const missing = words.filter((word) => !resultWords.has(word));
  if (words.length > 0 && (words.length - missing.length) / words.length < DETAIL_COVERAGE)
    lost.push(...missing.slice(0, 5).map((word) => `"${word}"`));
  return lost;
}

/**
 * Check a curation answer against the set it was asked about (see the module comment). Pure: the same answer
 * on the same facts is always judged the same way.
 */
export function checkCuration(group: CurationGroup, answer: CurationAnswer): CurationCheck {
  const own = new Map(group.facts.map((fact) => [fact.id, fact]));
  const people = new Map(group.people.map((fact) => [fact.id, fact]));
  const known = new Set([...(group.known ?? []), ...knownNames([...group.facts, ...group.people])]);
  const claimed = new Set<string>();
  const accepted: AcceptedResult[] = [];
  const refused: { title: string; reason: string }[] = [];
  const review = new Map<string, { fact: Fact; reason: string }>();
  for (const flagged of answer.review) {
    const fact = people.get(flagged.id);
    if (fact !== undefined) review.set(fact.id, { fact, reason: flagged.reason });
  }
  for (const result of answer.results) {
    const title = result.title.trim();
    const text: FactText = {
      title,
      body: result.body.trim(),
      why: emptyToUndefined(result.why),
      howToApply: emptyToUndefined(result.howToApply),
    };
    const refuse = (reason: string): void => {
      refused.push({ title, reason });
    };
    const ids = [...new Set(result.replaces)];
    if (title === '' || text.body === '') {
      refuse('it has no title or no body');
      continue;
    }
    if (ids.length === 0) {
      refuse('it replaces no fact');
      continue;
    }
    const personal = ids.filter((id) => people.has(id));
    if (personal.length > 0) {
      for (const id of personal) {
        const fact = people.get(id) as Fact;
        review.set(id, {
          fact,
          reason: `curation proposed to rewrite it as "${title}": ${text.body}`,
        });
      }
      refuse(`it rewrites a person's fact (${personal.join(', ')}); listed for review instead`);
      continue;
    }
    const unknown = ids.filter((id) => !own.has(id));
    if (unknown.length > 0) {
      refuse(`it replaces facts not in the set (${unknown.join(', ')})`);
      continue;
    }
    const twice = ids.filter((id) => claimed.has(id));
    if (twice.length > 0) {
      refuse(`it replaces facts another result already replaces (${twice.join(', ')})`);
      continue;
    }
    const replaced = ids.map((id) => own.get(id) as Fact);
    const outdated = new Set(result.outdated.filter((id) => ids.includes(id)));
    // Facts kept side by side must be about one subject; an outdated one is an older value of it.
    const kept = replaced.filter((fact) => !outdated.has(fact.id));
    const apart = kept.flatMap((a, i) =>
      kept.slice(i + 1).flatMap((b) => (differentSubjects(a, b, known) ? [`${a.id} and ${b.id}`] : [])),
    );
    if (apart.length > 0) {
      refuse(`it merges facts about different subjects (${apart.join('; ')})`);
      continue;
    }
    const added = invented(text, replaced, known);
    if (added.length > 0) {
      refuse(`it adds names, numbers or links none of its facts holds (${added.join(', ')})`);
      continue;
    }
    const lost: string[] = [];
    for (const fact of replaced) {
      if (outdated.has(fact.id)) {
        // The newest value wins: an outdated fact needs a newer one in the same result that is kept.
        const newer = replaced.some(
          (other) =>
            other.id !== fact.id &&
            !outdated.has(other.id) &&
            other.updated >= fact.updated &&
            // One subject: the same first name, or titles alike (a changed value names another place).
            (!differentSubjects(fact, other, known) ||
              titleSimilarity(fact.title, other.title) >= OUTDATED_TITLE_SIMILARITY),
        );
        if (!newer)
          lost.push(
            `${fact.id} is called outdated but no newer fact of the same subject in the result replaces it`,
          );
        continue;
      }
      const details = lostDetails(fact, text, known);
      if (details.length > 0) lost.push(`${fact.id} ("${fact.title}") loses ${details.join(', ')}`);
    }
    if (lost.length > 0) {
      refuse(`it drops a fact: ${lost.join('; ')}`);
      continue;
    }
    for (const id of ids) claimed.add(id);
    accepted.push({ type: group.type, ...text, replaces: replaced });
  }
  return { accepted, refused, review: [...review.values()] };
}

/** What curation did in one run: for the run record (its cost included) and the write. */
export interface CurationOutcome {
  readonly accepted: readonly AcceptedResult[];
  readonly refused: readonly { readonly type: FactType; readonly title: string; readonly reason: string }[];
  readonly review: readonly { readonly fact: Fact; readonly reason: string }[];
  readonly calls: number;
  readonly usage: TokenUsage;
  readonly costUsd: number | undefined;
  /** Types curated and why; types whose call failed, with the error (the run goes on without them). */
  readonly types: readonly { readonly type: FactType; readonly why: readonly CurationTrigger[] }[];
  readonly failures: readonly string[];
  /**
   * The answers to the tasks the calls carried ({@link CarriedTask}), by task: the value of the task's field,
   * or why there is none (the call failed); absent for a task no call carried (fewer types to curate).
   */
  readonly carried: readonly ({ readonly answer: unknown } | { readonly failed: string })[];
}

export const NO_CURATION: CurationOutcome = {
  accepted: [],
  refused: [],
  review: [],
  calls: 0,
  usage: emptyUsage(),
  costUsd: undefined,
  types: [],
  failures: [],
  carried: [],
};

/**
 * A task of another step a curation call answers beside its own, so a run pays one call for both (the update
 * check, `update-check.ts`): its instructions follow curation's, its prompt follows the facts, and its answer is
 * the field `field` of the call's answer, of the shape `schema`.
 */
export interface CarriedTask {
  readonly instructions: string;
  readonly prompt: string;
  readonly field: string;
  readonly schema: z.ZodType;
}

/** What the curation calls of a run need: the budgets, the model, the calls left, pricing and the run's signal. */
export interface CurationCallOptions {
  readonly config: CurationConfig;
  readonly model: () => ModelProvider;
  readonly maxCalls: number;
  readonly maxOutputTokens: number;
  readonly costOf?: ((usage: TokenUsage) => number | undefined) | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The request of one curation call, with the task it carries, if any. */
function curationRequest(
  group: CurationGroup,
  task: CarriedTask | undefined,
  options: CurationCallOptions,
): GenerateObjectRequest<CurationAnswer & Record<string, unknown>> {
  return {
    system: task === undefined ? CURATION_INSTRUCTIONS : `${CURATION_INSTRUCTIONS}\n\n${task.instructions}`,
    prompt: task === undefined ? curationPrompt(group) : `${curationPrompt(group)}\n\n${task.prompt}`,
    schema: (task === undefined
      ? CurationAnswer
      : CurationAnswer.extend({ [task.field]: task.schema })) as z.ZodType<
      CurationAnswer & Record<string, unknown>
    >,
    schemaName: CURATION_SCHEMA_NAME,
    maxOutputTokens: options.maxOutputTokens,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

/**
 * The curation phase of a run: one call per type {@link curationGroups} picks, each answer checked by
 * {@link checkCuration}; the first calls carry `carry`'s tasks, one each. A call that fails (a model error, an
 * answer that does not parse) leaves its type as it is and is reported; the run goes on. `maxCalls` caps the
 * calls (what the run's call budget has left).
 */
export async function curateMemory(
  facts: readonly Fact[],
  options: CurationCallOptions & {
    /** Ids of the facts this run added or changed (see {@link curationGroups}); absent: every type is looked at. */
    readonly fresh?: ReadonlySet<string> | undefined;
    readonly carry?: readonly CarriedTask[] | undefined;
  },
): Promise<CurationOutcome> {
  const groups = curationGroups(facts, options.config, options.fresh).slice(0, Math.max(0, options.maxCalls));
  if (groups.length === 0) return NO_CURATION;
  const accepted: AcceptedResult[] = [];
  const refused: { type: FactType; title: string; reason: string }[] = [];
  const review: { fact: Fact; reason: string }[] = [];
  const failures: string[] = [];
  const carried: CurationOutcome['carried'][number][] = [];
  const spent = createUsageTally();
  let calls = 0;
  for (const [at, group] of groups.entries()) {
    calls += 1;
    const task = options.carry?.[at];
    try {
      const result = await options.model().generateObject(curationRequest(group, task, options));
      countUsage(spent, result.usage, options.costOf?.(result.usage));
      if (task !== undefined) carried.push({ answer: result.value[task.field] });
      const check = checkCuration(group, result.value);
      accepted.push(...check.accepted);
      refused.push(...check.refused.map((entry) => ({ type: group.type, ...entry })));
      review.push(...check.review);
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      const reason = (error as Error).message.split('\n')[0] ?? '';
      if (task !== undefined) carried.push({ failed: reason });
      failures.push(
        `curation of ${group.type} facts failed (${reason}); they stay as they are until the next run`,
      );
    }
  }
  return {
    accepted,
    refused,
    review,
    calls,
    usage: spent.usage,
    costUsd: options.costOf === undefined ? undefined : spent.costUsd,
    types: groups.map((group) => ({ type: group.type, why: group.why })),
    failures,
    carried,
  };
}

/** An accepted result {@link applyCuration} could not apply, and why: its facts stay as they are. */
export interface UnappliedResult {
  readonly result: AcceptedResult;
  readonly reason: string;
}

/**
 * Why a fact a result replaces can no longer be replaced by it, or undefined when it still can: it is still in
 * the run's facts, active, dreamd's own, and says what it said when curation read it.
 */
function changedSinceCurated(old: Fact, now: Fact | undefined): string | undefined {
  const named = `fact ${old.id} ("${old.title}")`;
  if (now === undefined) return `${named} is no longer in memory`;
  if (now.status !== 'active')
    return `${named} was superseded${now.supersededBy === undefined ? '' : ` by ${now.supersededBy}`} since curation read it`;
  if (!isCuratable(now)) return `${named} was edited by a person since curation read it`;
  if (now.title !== old.title || now.body !== old.body) return `${named} changed since curation read it`;
  return undefined;
}

/** The key of the fact a result becomes (see `fact-ids.ts`): its text and the facts it replaces. */
function resultKey(result: AcceptedResult): string {
  return factKey(
    'curation',
    result,
    result.replaces.map((fact) => fact.id),
  );
}

/** The `taughtAgain` field of a fact that merges `facts`: their records joined, absent when none has one. */
function taughtAgainOf(facts: readonly Fact[]): { taughtAgain?: TaughtAgain } {
  const joined = facts.reduce<TaughtAgain | undefined>(
    (record, fact) => joinTaughtAgain(record, fact.taughtAgain),
    undefined,
  );
  return joined === undefined ? {} : { taughtAgain: joined };
}

/**
 * Apply accepted results to the run's facts. Pure. A result whose facts changed since the call (a hand edit,
 * a newer fact superseded one, one gone) is not applied: its facts stay, and it is returned in `unapplied` with
 * the reason, for the run's account of curation. Returns the facts and, per new fact, what it replaced.
 * `newId` gives the merged fact its id from the result (the same result, the same id in every plan of a run).
 */
export function applyCuration(
  facts: readonly Fact[],
  accepted: readonly AcceptedResult[],
  options: { readonly today: string; readonly newId: (key: string) => string },
): { facts: Fact[]; merged: { fact: Fact; by: Fact }[]; unapplied: UnappliedResult[] } {
  const byId = new Map(facts.map((fact) => [fact.id, fact]));
  const added: Fact[] = [];
  const merged: { fact: Fact; by: Fact }[] = [];
  const unapplied: UnappliedResult[] = [];
  for (const result of accepted) {
    const changed = result.replaces.flatMap((old) => changedSinceCurated(old, byId.get(old.id)) ?? []);
    if (changed.length > 0) {
      unapplied.push({
        result,
        reason: `its facts changed before it could be applied (${changed.join('; ')}); they stay as they are`,
      });
      continue;
    }
    const observed = result.replaces.map((fact) => fact.observed).sort()[0] as string;
    const updated = result.replaces
      .map((fact) => fact.updated)
      .sort()
      .at(-1) as string;
    const fact: Fact = {
      id: options.newId(resultKey(result)),
      type: result.type,
      title: result.title,
      body: result.body,
      why: result.why,
      howToApply: result.howToApply,
      observed,
      updated,
      sources: [...new Set(result.replaces.flatMap((old) => old.sources))],
      // Times people taught the merged facts again add up: the merged fact keeps its place first in its section.
      ...taughtAgainOf(result.replaces.map((old) => byId.get(old.id) ?? old)),
      status: 'active',
      supersededBy: undefined,
      supersededOn: undefined,
      editedByHand: false,
    };
    added.push(fact);
    for (const old of result.replaces) {
      const gone: Fact = {
        ...(byId.get(old.id) as Fact),
        status: 'superseded',
        supersededBy: fact.id,
        supersededOn: options.today,
      };
      byId.set(old.id, gone);
      merged.push({ fact: gone, by: fact });
    }
  }
  return { facts: [...byId.values(), ...added], merged, unapplied };
}

/**
 * A fact learned again after curation merged it into a broader fact: the new copy is dropped and its sources
 * join the active fact that holds its text whole (the end of the merged fact's chain), so merging never makes
 * a duplicate of a repeated fact. Pure. `mergedAway`: ids of facts curation merged (the archive's `merged`).
 */
export function absorbRepeats(
  facts: readonly Fact[],
  added: readonly Fact[],
  mergedAway: ReadonlySet<string>,
  taught?: {
    /** The facts memory held before the run, by id: a head among them was saved. */
    readonly saved: ReadonlyMap<string, Fact>;
    /** Reconcile's test: whether a session started after that fact was saved. */
    readonly taughtAfterSaved: (fact: Fact, sessionId: string) => boolean;
  },
): { facts: Fact[]; absorbed: ReadonlySet<string> } {
  const byId = new Map(facts.map((fact) => [fact.id, fact]));
  const merged = new Map<string, Fact>();
  for (const fact of facts) if (mergedAway.has(fact.id)) merged.set(fact.body.trim(), fact);
  const absorbed = new Set<string>();
  for (const fact of added) {
    const earlier = fact.status === 'active' ? merged.get(fact.body.trim()) : undefined;
    let head = earlier;
    for (let step = 0; head !== undefined && head.status !== 'active' && step < MAX_MERGE_CHAIN; step += 1)
      head = head.supersededBy === undefined ? undefined : byId.get(head.supersededBy);
    if (head === undefined || head.status !== 'active' || !head.body.includes(fact.body.trim())) continue;
    absorbed.add(fact.id);
    byId.delete(fact.id);
    // Said again by a session after the merged fact was saved: taught again, as a merge in reconcile counts.
    const saved = taught?.saved.get(head.id);
    const again =
      saved === undefined || saved.status !== 'active'
        ? []
        : fact.sources.filter(
            (session) => !head.sources.includes(session) && taught?.taughtAfterSaved(saved, session) === true,
          );
    const taughtAgain =
      again.length === 0 ? head.taughtAgain : addTaughtAgain(head.taughtAgain, again, fact.observed);
    byId.set(head.id, {
      ...head,
      sources: [...new Set([...head.sources, ...fact.sources])],
      updated: fact.updated > head.updated ? fact.updated : head.updated,
      ...(taughtAgain === undefined ? {} : { taughtAgain }),
    });
  }
  return { facts: [...byId.values()], absorbed };
}
