/**
 * The update check: after extraction, the run's new facts that have a near neighbour their extraction call did
 * not show (a fact far back in memory, or one of another call of the same run that ran at the same time) are
 * shown to the model once more, each beside those neighbours, and the model names the ones each new fact
 * replaces (a new value of the same subject, a changed mind, the same fact said again).
 *
 * Why a second look: an extraction call carries a memory list chosen for its digest within a token budget
 * (`memory-list.ts`), so in a large memory the older fact an update replaces is often not in it, and calls of
 * one backlog that run in parallel cannot see each other's facts. Here the search is per new fact (its own
 * title and body as the query, through an inverted index of the words, as mem0 retrieves similar memories for each new one, and by the names it holds),
 * so the neighbours are few and close, and the call is small: only new facts with an unseen neighbour, at most
 * {@link NEIGHBOURS_PER_FACT} neighbours each. A run where every neighbour was in view makes no call.
 *
 * Extraction prepares the check ({@link prepareUpdateCheck}); the reconcile step asks it (`curate-run.ts`): a
 * curation call of the run carries it as a second task ({@link UPDATE_CHECK_TASK}), so a run that curates pays
 * no call of its own for it, and {@link checkUpdates} asks alone what no call carried.
 *
 * The answer is data: an id a new fact did not list is ignored, and a call that fails (an error, an answer
 * out of shape) leaves the facts as extraction gave them, with a note: nothing is lost, an update may stay
 * unrecognised until a later run sees both.
 */
import { z } from 'zod';
import { CHARS_PER_TOKEN } from '../../digest/index.js';
import { textLanguage, tokenize, type StemLanguage } from '../../search/bm25.js';
import { attributesOf, shareAttribute } from './attributes.js';
import { knownNames, namesIn } from '../curation/curate.js';
import type { ExtractedFact } from './extraction.js';
import { contentWords, differsOnlyAtTheEnd, sequenceSimilarity } from '../facts/similarity.js';
import { SAME_SUBJECT_MIN_TITLE_WORDS, SAME_SUBJECT_THRESHOLD } from '../facts/tunables.js';
import type { MemoryListFact } from './memory-list.js';
import type { GenerateObjectRequest, ModelProvider, TokenUsage } from '../../model/types.js';
import { countUsage, createUsageTally } from '../../model/call-tally.js';
import {
  NEIGHBOURS_PER_FACT,
  NEIGHBOUR_MIN_SHARED_WORDS,
  FACTS_PER_CHECK_CALL,
  CHECK_TOKENS_PER_CALL,
  COMMON_SHARE,
  ALIKE_SCANNED_PER_FACT,
  COMMON_FLOOR,
  CHECK_TITLE_MAX_CHARS,
  CHECK_BODY_MAX_CHARS,
  CHECK_HOOK_MAX_CHARS,
} from './tunables.js';

export const UPDATE_CHECK_SCHEMA_NAME = 'update_check';

/** A calendar day in a fact's text (dreamd writes dates absolute, YYYY-MM-DD). */
const DAY = /\b\d{4}-\d{2}-\d{2}\b/;

/** Characters an item adds to a check prompt whose related facts already hold `related`. */
function itemChars(fact: ExtractedFact, item: CheckItem, related: ReadonlySet<string>): number {
  // 60 and 40: a line's fixed part (id, type, date, separators), as `updateCheckPrompt` writes it.
  let chars =
    60 +
    Math.min(fact.title.length, CHECK_TITLE_MAX_CHARS) +
    Math.min(fact.body.length, CHECK_BODY_MAX_CHARS);
  for (const neighbour of item.neighbours)
    if (!related.has(neighbour.id))
      chars +=
        40 +
        Math.min(neighbour.title.length, CHECK_TITLE_MAX_CHARS) +
        Math.min(neighbour.hook.length, CHECK_HOOK_MAX_CHARS);
  return chars;
}

/** The items in calls: each call up to {@link FACTS_PER_CHECK_CALL} facts and {@link CHECK_TOKENS_PER_CALL} tokens. */
export function checkCalls(candidates: readonly ExtractedFact[], items: readonly CheckItem[]): CheckItem[][] {
  const calls: CheckItem[][] = [];
  let current: CheckItem[] = [];
  let related = new Set<string>();
  let chars = 0;
  for (const item of items) {
    const fact = candidates[item.position] as ExtractedFact;
    const added = itemChars(fact, item, related);
    const full =
      current.length >= FACTS_PER_CHECK_CALL || chars + added > CHECK_TOKENS_PER_CALL * CHARS_PER_TOKEN;
    if (current.length > 0 && full) {
      calls.push(current);
      current = [];
      related = new Set();
      chars = 0;
    }
    chars += itemChars(fact, item, related);
    current.push(item);
    for (const neighbour of item.neighbours) related.add(neighbour.id);
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

/** What makes a new fact replace a related one: said the same way whether the check goes alone or rides on curation. */
const REPLACE_RULES = `- it replaces a related fact when both are about the same subject and the new one gives its current value or says it again: the person moved, changed jobs, switched tools, changed their mind, the project migrated, or the same fact in other words;
- it does not replace a fact about another person, place, project or thing, nor one that only shares a word or a topic with it, nor one that stays true beside it (two pets, two projects, two allergies).`;

export const UPDATE_CHECK_INSTRUCTIONS = `You keep a memory of facts up to date.

Each new fact below comes with a few existing facts that may be about the same subject. For each new fact, decide which of its related facts it replaces:
${REPLACE_RULES}

Answer with the new facts that replace something, each with the ids of the related facts it replaces, taken only from its own "related" list. Leave out new facts that replace nothing.`;

/**
 * The check as a second task of a curation call (`curate-run.ts`): its sections follow curation's facts, and its
 * answer goes in `updates`, beside curation's results.
 */
export const UPDATE_CHECK_TASK = `A second task, on its own: keep memory up to date.
The sections "Related facts" and "New facts" at the end list facts this run just learned ("new-…" ids), each with a few existing facts that may be about the same subject. For each new fact, decide which of its related facts it replaces:
${REPLACE_RULES}

Answer this task in "updates": the new facts that replace something, each with the ids of the related facts it replaces, taken only from its own "related" list. Leave out new facts that replace nothing. This task does not change how you curate the facts above.`;

export const UpdateCheckAnswer = z.object({
  updates: z.array(
    z.object({
      fact: z.string(),
      replaces: z.array(z.string()),
    }),
  ),
});
export type UpdateCheckAnswer = z.infer<typeof UpdateCheckAnswer>;

/** A fact a new fact may replace: one of memory's (by fact id) or another of this run's (by its run id). */
export interface Neighbour {
  readonly id: string;
  readonly type: string;
  readonly title: string;
  readonly hook: string;
}

/** A new fact of the run with the neighbours its extraction call did not show. */
export interface CheckItem {
  /** Its position in the run's candidates. */
  readonly position: number;
  readonly neighbours: readonly Neighbour[];
}

export interface UpdateCheckOptions {
  /** Active facts in ranking order (`rankedMemoryList`): memory's side of the search. */
  readonly index: readonly MemoryListFact[];
  /** Id a run candidate is listed under (`runFactId`). */
  readonly runId: (position: number) => string;
  /** Per candidate, the ids of memory and of the run its extraction call showed (or that shared its answer). */
  readonly shown: readonly ReadonlySet<string>[];
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** A text's words (stemmed, stop words out) and its names, for the neighbour search. */
interface Terms {
  readonly words: ReadonlySet<string>;
  readonly names: ReadonlySet<string>;
  /** Its first name: what the fact is about ("The Delta project stores its data in SQLite": Delta). */
  readonly subject: string | undefined;
  /** The language it is told in (by its stop words). */
  readonly language: StemLanguage;
  /** It holds a date: an event on a day ("went to the dentist on 2025-10-18"), not a state a later fact changes. */
  readonly dated: boolean;
  /** What it says of its subject: job, home, indentation … (`attributes.ts`). */
  readonly attributes: ReadonlySet<string>;
  /** Content words of its title, in order. */
  readonly titleWords: readonly string[];
}

function termsOf(title: string, text: string, known: ReadonlySet<string>): Terms {
  // Names as curation reads them (`namesIn`): a capitalised word inside a sentence, a possessive, or a first
  // word written as a name elsewhere; not "User" or "Always" opening a sentence, which would make every fact
  // of a space one subject's.
  const names = tokenize(
    namesIn({ title, body: text, why: undefined, howToApply: undefined }, known).join(' '),
  );
  return {
    words: new Set(tokenize(text)),
    names: new Set(names),
    subject: names[0],
    language: textLanguage(text),
    dated: DAY.test(text),
    attributes: attributesOf(text),
    titleWords: contentWords(title),
  };
}

/** The first words of a title, which a title alike but for its end shares (see `titlesAlike`). */
function titleHead(titleWords: readonly string[]): string | undefined {
  return titleWords.length < SAME_SUBJECT_MIN_TITLE_WORDS
    ? undefined
    : titleWords.slice(0, SAME_SUBJECT_MIN_TITLE_WORDS).join(' ');
}

/**
 * Titles alike word for word, in order, parting only at their end ("Plot 12 at the river site grows leeks" /
 * "… grows fennel"): one subject whose value may have changed, or two rules alike but for what they apply to.
 * Code cannot tell which (`reconcile.ts`): such a pair always goes to the model.
 */
function titlesAlike(a: readonly string[], b: readonly string[]): boolean {
  // The similarity is at most that of the shorter title all in the longer one: a length test first, and the
  // word-by-word table last, for the few titles of a length alike that part only at their end.
  const most = (2 * Math.min(a.length, b.length)) / (a.length + b.length);
  return (
    titleHead(a) !== undefined &&
    most >= SAME_SUBJECT_THRESHOLD &&
    differsOnlyAtTheEnd(a, b) &&
    sequenceSimilarity(a, b) >= SAME_SUBJECT_THRESHOLD
  );
}

/** A text the neighbour search found for a query, and how it is related to it. */
interface NeighbourHit {
  readonly position: number;
  /** Words about the subject both share (names apart). */
  readonly shared: number;
  /** Both name someone or something alike. */
  readonly named: boolean;
  /** Both are about the same first name. */
  readonly sameSubject: boolean;
  readonly otherLanguage: boolean;
  /** Both hold a date, or neither does. */
  readonly sameKind: boolean;
  /** The shared words' inverse document frequency, summed. */
  readonly score: number;
  /** Both say the same of their subject: the job, the home, the indentation (`attributes.ts`). */
  readonly sameAttribute: boolean;
  /** Titles alike but for their end (`titlesAlike`). */
  readonly sameTitle: boolean;
}

/**
 * The facts that share a selective word with each query: an inverted index over the texts' words, so a search
 * costs the postings of the query's rare words, not a pass over every text. Each hit carries the words and the
 * names shared, and a score: the shared words' inverse document frequency, summed (BM25 without its length and
 * frequency terms, which one-sentence facts hardly need).
 */
function createWordLookup(texts: readonly Terms[], dates: readonly string[]) {
  // Positions by word, by name (the word lookup's postings) and by the head of the title.
  const postings = new Map<string, number[]>();
  const named = new Map<string, number[]>();
  const heads = new Map<string, number[]>();
  const post = (lists: Map<string, number[]>, key: string, position: number): void => {
    const list = lists.get(key);
    if (list === undefined) lists.set(key, [position]);
    else list.push(position);
  };
  texts.forEach((terms, position) => {
    for (const word of terms.words) post(postings, word, position);
    for (const name of terms.names) post(named, name, position);
    const head = titleHead(terms.titleWords);
    if (head !== undefined) post(heads, head, position);
  });
  // A name's and a head's texts oldest first (by date, then position): a query takes the latest that come
  // before it.
  const older = (a: number, b: number): number => {
    const [x, y] = [dates[a] ?? '', dates[b] ?? ''];
    return x < y ? -1 : x > y ? 1 : a - b;
  };
  for (const list of [...named.values(), ...heads.values()]) list.sort(older);
  /**
   * The texts of `list` that `admit` takes, at most {@link ALIKE_SCANNED_PER_FACT}, the latest first of those
   * older than the text at `before` (all of them when undefined).
   */
  const latest = (
    list: readonly number[] | undefined,
    before: number | undefined,
    admit: (position: number) => boolean,
  ): number[] => {
    if (list === undefined) return [];
    let end = list.length;
    if (before !== undefined) {
      // The first of the list not older than `before`: the texts before it are the older ones.
      let low = 0;
      while (low < end) {
        const middle = (low + end) >> 1;
        if (older(list[middle] as number, before) < 0) low = middle + 1;
        else end = middle;
      }
    }
    const taken: number[] = [];
    for (let at = end - 1; at >= 0 && taken.length < ALIKE_SCANNED_PER_FACT; at -= 1) {
      const position = list[at] as number;
      if (admit(position)) taken.push(position);
    }
    return taken;
  };
  const common = Math.max(COMMON_FLOOR, texts.length * COMMON_SHARE);
  const idf = (word: string): number => {
    const n = postings.get(word)?.length ?? 0;
    return Math.log(1 + (texts.length - n + 0.5) / (n + 0.5));
  };
  /** The texts `query` finds; `before`: a position of these texts, only those older than it are found. */
  return (query: Terms, before?: number): NeighbourHit[] => {
    const hits = new Set<number>();
    for (const word of query.words) {
      const list = postings.get(word);
      if (list !== undefined && list.length <= common) for (const position of list) hits.add(position);
    }
    // The facts of a person or thing however many there are, when they say the same of it (the job, the home):
    // a name shared by a hundred facts finds none of them by its postings. The latest such facts: an update
    // replaces the value before it.
    for (const name of query.names)
      for (const position of latest(named.get(name), before, (at) =>
        shareAttribute(query.attributes, (texts[at] as Terms).attributes),
      ))
        hits.add(position);
    // Titles that start alike, however common their words: a plot's other crop, a rule's other value.
    const head = titleHead(query.titleWords);
    if (head !== undefined)
      for (const position of latest(heads.get(head), before, () => true)) hits.add(position);
    // Each word's weight once per query, not once per text found.
    const weighed = [...query.words].map((word) => ({
      word,
      weight: idf(word),
      name: query.names.has(word),
    }));
    return [...hits].map((position) => {
      const terms = texts[position] as Terms;
      let shared = 0;
      let score = 0;
      for (const { word, weight, name } of weighed)
        if (terms.words.has(word)) {
          // A name is not a word about the subject (it is the subject): a name and its stem ("ines", "ine")
          // would otherwise make every fact of the person close.
          if (!name) shared += 1;
          score += weight;
        }
      let named = false;
      for (const name of query.names) if (terms.names.has(name)) named = true;
      const sameSubject = query.subject !== undefined && terms.subject === query.subject;
      return {
        position,
        shared,
        named,
        sameSubject,
        otherLanguage: terms.language !== query.language,
        sameKind: terms.dated === query.dated,
        score,
        sameAttribute: shareAttribute(query.attributes, terms.attributes),
        sameTitle: titlesAlike(query.titleWords, terms.titleWords),
      };
    });
  };
}

/**
 * The new facts worth a second look, each with the neighbours its call did not show that the model could name:
 * memory facts and the run's other facts (observed no later than it: the newer of two names the older). A
 * neighbour is one that shares {@link NEIGHBOUR_MIN_SHARED_WORDS} rare words with its title and body, or whose
 * title is alike but for its end, or that names the same person or thing in its type and says the same of it
 * (the job, the home, the indentation, in English, Portuguese or Spanish: `attributes.ts`; an update said in
 * Portuguese shares nothing else). A fact of a subject with a hundred others is shown those about the same
 * attribute, not the newest ones; a fact whose only neighbours share a name and nothing said of it is not
 * checked at all: no call for what the model could not name. Ranked: same title, same subject, same
 * attribute, another language, same kind (state or dated event), rarer words shared, newest; at most
 * {@link NEIGHBOURS_PER_FACT}.
 */
export function checkItems(candidates: readonly ExtractedFact[], options: UpdateCheckOptions): CheckItem[] {
  if (candidates.length === 0) return [];
  const known = knownNames([
    ...candidates.map((fact) => ({
      title: fact.title,
      body: fact.body,
      why: undefined,
      howToApply: undefined,
    })),
    ...options.index.map((fact) => ({
      title: fact.title,
      body: fact.searchText,
      why: undefined,
      howToApply: undefined,
    })),
  ]);
  const runTerms = candidates.map((fact) => termsOf(fact.title, `${fact.title}\n${fact.body}`, known));
  const searchMemory = createWordLookup(
    options.index.map((fact) => termsOf(fact.title, fact.searchText, known)),
    options.index.map((fact) => fact.updated),
  );
  const searchRun = createWordLookup(
    runTerms,
    candidates.map((fact) => fact.observed),
  );
  type Found = { neighbour: Neighbour; hit: NeighbourHit; translated: boolean; date: string };
  // Facts alike by title first (a plot's other crop), then about the same subject, the same attribute of it, said
  // in another language, of the same kind, the closest by rare words; of facts alike, the latest first: an update
  // replaces the value before it, and a subject changed often in one backlog has several alike facts.
  const rank = (a: Found, b: Found): number =>
    Number(b.hit.sameTitle) - Number(a.hit.sameTitle) ||
    Number(b.hit.sameSubject) - Number(a.hit.sameSubject) ||
    Number(b.hit.sameAttribute) - Number(a.hit.sameAttribute) ||
    Number(b.translated) - Number(a.translated) ||
    Number(b.hit.sameKind) - Number(a.hit.sameKind) ||
    b.hit.score - a.hit.score ||
    (a.date === b.date ? 0 : a.date < b.date ? 1 : -1) ||
    a.neighbour.id.localeCompare(b.neighbour.id);
  const items: CheckItem[] = [];
  candidates.forEach((candidate, position) => {
    const shown = options.shown[position] ?? new Set<string>();
    const query = runTerms[position] as Terms;
    // Words about the subject a close neighbour shares; a fact of names alone has none, its neighbours are named.
    const about = [...query.words].filter((word) => !query.names.has(word)).length;
    const needed = about === 0 ? Number.POSITIVE_INFINITY : Math.min(NEIGHBOUR_MIN_SHARED_WORDS, about);
    const found: Found[] = [];
    const keep = (neighbour: Neighbour, date: string, hit: NeighbourHit): void => {
      if (shown.has(neighbour.id) || candidate.replaces.includes(neighbour.id)) return;
      const sameType = neighbour.type === candidate.type;
      const close = hit.shared >= needed;
      // Of the facts that share only a name, one is about something else unless it says the same of it (the
      // job, the home, in English, Portuguese or Spanish); of those, one in another language first: this
      // subject said in other words. (Another language alone admits none: short texts' languages are guesses.)
      const translated = !close && hit.otherLanguage;
      const named = sameType && hit.named && hit.sameAttribute;
      if (close || (sameType && hit.sameTitle) || named) found.push({ neighbour, hit, translated, date });
    };
    for (const hit of searchMemory(query)) {
      const fact = options.index[hit.position] as MemoryListFact;
      keep({ id: fact.id, type: fact.type, title: fact.title, hook: fact.hook ?? '' }, fact.updated, hit);
    }
    for (const hit of searchRun(query, position)) {
      const at = hit.position;
      const other = candidates[at] as ExtractedFact;
      if (at === position || other.observed > candidate.observed) continue;
      if (other.observed === candidate.observed && at > position) continue;
      keep(
        { id: options.runId(at), type: other.type, title: other.title, hook: other.body },
        other.observed,
        hit,
      );
    }
    const neighbours = found.sort(rank).slice(0, NEIGHBOURS_PER_FACT);
    if (neighbours.length === 0) return;
    items.push({ position, neighbours: neighbours.map((entry) => entry.neighbour) });
  });
  return items;
}

/** Id a new fact is listed under in a check prompt. */
export function newFactId(position: number): string {
  return `new-${position + 1}`;
}

/** The prompt of one check call: the related facts once each, then the new facts with their related ids. */
export function updateCheckPrompt(candidates: readonly ExtractedFact[], items: readonly CheckItem[]): string {
  const related = new Map<string, Neighbour>();
  for (const item of items) for (const neighbour of item.neighbours) related.set(neighbour.id, neighbour);
  return [
    '## Related facts (id | type | title — hook)',
    ...[...related.values()].map(
      (fact) =>
        `${fact.id} | ${fact.type} | ${oneLine(fact.title, CHECK_TITLE_MAX_CHARS)} — ${oneLine(fact.hook, CHECK_HOOK_MAX_CHARS)}`,
    ),
    '',
    '## New facts (id | type | observed | title — body | related ids)',
    ...items.map((item) => {
      const fact = candidates[item.position] as ExtractedFact;
      return `${newFactId(item.position)} | ${fact.type} | ${fact.observed} | ${oneLine(fact.title, CHECK_TITLE_MAX_CHARS)} — ${oneLine(fact.body, CHECK_BODY_MAX_CHARS)} | related: ${item.neighbours.map((neighbour) => neighbour.id).join(', ')}`;
    }),
    '',
    'Which related facts does each new fact replace?',
  ].join('\n');
}

/**
 * A run's update check before it is asked: the run's candidates as extraction gave them (run ids are their
 * positions) and the items to ask about, in calls ({@link checkCalls}). A call may go alone, or ride on a
 * curation call of the same run (`curate-run.ts`), which then answers it beside its own task.
 */
export interface UpdateCheck {
  readonly candidates: readonly ExtractedFact[];
  readonly chunks: readonly (readonly CheckItem[])[];
}

/** The update check of a run's candidates (see the module comment): which facts to ask about, in which calls. */
export function prepareUpdateCheck(
  candidates: readonly ExtractedFact[],
  options: UpdateCheckOptions,
): UpdateCheck {
  return { candidates, chunks: checkCalls(candidates, checkItems(candidates, options)) };
}

export interface UpdateCheckResult {
  /** The candidates with the replaced ids the check found added to their `replaces`. */
  readonly candidates: readonly ExtractedFact[];
  /** Calls the check made alone (a check that rode on a curation call is counted there). */
  readonly calls: number;
  readonly usage: TokenUsage;
  readonly costUsd: number | undefined;
  /** New facts found to replace a fact their extraction call did not show. */
  readonly found: number;
  /** New facts looked at again (those with an unseen neighbour). */
  readonly checked: number;
  /** Calls of the check that rode on a curation call. */
  readonly carried: number;
  readonly notes: readonly string[];
}

/** The answer to a chunk of the check, or why it has none (the call failed), from a call that carried it. */
export type CarriedAnswer = { readonly updates: UpdateCheckAnswer['updates'] } | { readonly failed: string };

function isAnswered(answer: CarriedAnswer | undefined): boolean {
  return answer !== undefined && 'updates' in answer;
}

/**
 * Reads one answer of the check into `result` (the candidates being checked): an id a new fact did not list is
 * ignored. Returns how many new facts it found to replace something they did not name yet.
 */
function readCheckAnswer(
  chunk: readonly CheckItem[],
  updates: UpdateCheckAnswer['updates'],
  result: (ExtractedFact & { replaces: string[] })[],
): number {
  let found = 0;
  const byId = new Map(chunk.map((item) => [newFactId(item.position), item]));
  for (const update of updates) {
    const item = byId.get(update.fact);
    if (item === undefined) continue;
    const allowed = new Set(item.neighbours.map((neighbour) => neighbour.id));
    const named = update.replaces.filter((id) => allowed.has(id));
    if (named.length === 0) continue;
    const target = result[item.position] as ExtractedFact & { replaces: string[] };
    const before = target.replaces.length;
    target.replaces = [...new Set([...target.replaces, ...named])];
    if (target.replaces.length > before) found += 1;
    byId.delete(update.fact);
  }
  return found;
}

function failedNote(chunk: readonly CheckItem[], reason: string): string {
  return `the update check of ${chunk.length} new fact(s) failed (${reason}); they were kept as extracted, and an update among them is found when a later run sees both facts`;
}

/**
 * Finishes a run's update check (see the module comment): the chunks a curation call carried and answered are
 * read from `carried` (by chunk); the others, and those whose carrying call failed, are asked alone, within
 * `maxCalls`. Returns the candidates unchanged, with a
 * note, where a call failed or the call budget was spent.
 */
export async function checkUpdates(
  check: UpdateCheck,
  options: {
    readonly model: () => ModelProvider;
    readonly maxCalls: number;
    readonly maxOutputTokens: number;
    readonly costOf?: ((usage: TokenUsage) => number | undefined) | undefined;
    readonly signal?: AbortSignal | undefined;
    /** Answers of the chunks a curation call carried, by chunk. */
    readonly carried?: readonly CarriedAnswer[] | undefined;
  },
): Promise<UpdateCheckResult> {
  const { candidates, chunks } = check;
  const carried = options.carried ?? [];
  const result = candidates.map((candidate) => ({ ...candidate, replaces: [...candidate.replaces] }));
  const notes: string[] = [];
  const spent = createUsageTally();
  let calls = 0;
  let found = 0;
  for (const [at, chunk] of chunks.entries()) {
    const answered = carried[at];
    if (answered !== undefined && 'updates' in answered) {
      found += readCheckAnswer(chunk, answered.updates, result);
      continue;
    }
    // A chunk whose carrying call failed is asked alone, like one no call carried.
    if (calls >= options.maxCalls) {
      const left = chunks
        .slice(at)
        .reduce((sum, rest, index) => sum + (isAnswered(carried[at + index]) ? 0 : rest.length), 0);
      notes.push(
        `the update check of ${left} new fact(s) was left out: the run made its limits.maxCallsPerRun calls; an update among them is found when a later run sees both facts`,
      );
      break;
    }
    calls += 1;
    const request: GenerateObjectRequest<UpdateCheckAnswer> = {
      system: UPDATE_CHECK_INSTRUCTIONS,
      prompt: updateCheckPrompt(candidates, chunk),
      schema: UpdateCheckAnswer,
      schemaName: UPDATE_CHECK_SCHEMA_NAME,
      maxOutputTokens: options.maxOutputTokens,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    try {
      const answer = await options.model().generateObject(request);
      countUsage(spent, answer.usage, options.costOf?.(answer.usage));
      found += readCheckAnswer(chunk, answer.value.updates, result);
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      notes.push(failedNote(chunk, (error as Error).message.split('\n')[0] ?? ''));
    }
  }
  if (found > 0) {
    notes.push(
      `the update check found ${found} new fact(s) that replace a fact their extraction call did not show`,
    );
  }
  return {
    // The same list when nothing was added, so what was worked out from it need not be again.
    candidates: found > 0 ? result : check.candidates,
    calls,
    usage: spent.usage,
    costUsd: options.costOf === undefined ? undefined : spent.costUsd,
    found,
    checked: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
    carried: carried.filter(isAnswered).length,
    notes,
  };
}
