/**
 * What reconcile compares of a fact, computed once per fact object and kept while the object lives (facts and
 * candidates are immutable: a changed fact is a new object, so a cached entry never goes stale).
 *
 * Besides the words and word pairs of {@link textSimilarity}, each fact carries the **names** and **numbers**
 * it mentions. Pure-code rules (near duplicate, same subject, exact duplicate) only join two facts that name the
 * same names and the same numbers: "Melanie lost her job at the bakery" is never merged into "Caroline lost
 * her job at the bakery", "Release 2.4 ships on 2026-12-04" never supersedes "… on 2027-01-15", and a Grafana
 * board never supersedes a Datadog one. Only the model's `replaces` joins those.
 *
 * - A number is any word holding a digit ("10", "2026", "3pm", "v2"); dates and versions split into numbers.
 * - A link (`https://…`) names what it points to: two facts must hold the same links. Words inside a link are
 *   not read as words (a host name in lower case says nothing about a capitalised "Grafana" elsewhere).
 * - A name is a word written with a capital letter (at the start of a word, "Lisbon", or inside it, "iPhone",
 *   "AWS"), that is not a stop word or one of {@link NOT_NAMES}, and that neither of the two facts compared
 *   also writes in lower case: "Usual coffee order" next to "… as usual" is an ordinary word, and so is the
 *   first word of a sentence when the other fact uses it mid-sentence. A capitalised first word that the other
 *   fact does not use at all still counts ("Flat white …" against "Double espresso …"): without a dictionary a
 *   sentence-initial "Maria" and "Flat" look the same, and a missed merge is cheaper than a wrong one.
 */
import {
  contentWords,
  contentWordsOfNormalized,
  isStopWord,
  normalizeText,
  trimPlural,
  wordsAndPairs,
} from './similarity.js';
import { FEATURES_BY_TEXT_KEPT, NUMBERS_SCAN_MAX_CHARS } from './tunables.js';

/** The text of a fact or candidate: what its features are computed from. */
export interface FactText {
  readonly title: string;
  readonly body: string;
  readonly why: string | undefined;
  readonly howToApply: string | undefined;
}

/** What the indexes need of every fact: cheap, computed for each fact of a run. */
export interface FactFeatures {
  /** Normalised body: equal keys are exact duplicates, whatever the type. */
  readonly key: string;
  /** Content words of title, then body, in order, repeats kept (see `contentWords`). */
  readonly words: readonly string[];
  /** Content words of the title, in order. */
  readonly titleWords: readonly string[];
  /** Number of distinct words in `words`. */
  readonly distinctWords: number;
  /**
   * The digits the fact holds, in numbers and links, sorted and joined: two facts with different keys never
   * name the same numbers and links, so no pure-code rule joins them and the indexes keep them apart (see
   * `fact-lookup.ts`).
   */
  readonly numbersKey: string;
}

/** What a comparison needs: computed only for the facts a candidate is compared with. */
export interface FactDetails {
  /** Distinct content words of title and body. */
  readonly words: ReadonlySet<string>;
  /** Adjacent content-word pairs of title and of body. */
  readonly pairs: ReadonlySet<string>;
  /** Capitalised words (folded) that the fact never writes in lower case. */
  readonly names: ReadonlySet<string>;
  /** Words (folded) the fact writes in lower case. */
  readonly lowerWords: ReadonlySet<string>;
  /** Words holding a digit (folded). */
  readonly numbers: ReadonlySet<string>;
  /** Links (`scheme://…`), lower-cased, trailing punctuation trimmed. */
  readonly links: ReadonlySet<string>;
}

/** Capitalised words that say nothing about who or what a fact is about. */
const NOT_NAMES = new Set([
  'i',
  'user',
  'assistant',
  'agent',
  'we',
  'you',
  'my',
  'our',
  'why',
  'how',
  'apply',
]);

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LINK = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>()"'`]+/giu;
const TRAILING_PUNCTUATION = /[.,;:!?]+$/u;
const HAS_DIGIT = /\p{N}/u;
const HAS_UPPER = /\p{Lu}/u;

function fold(word: string): string {
  return trimPlural(
    word
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase(),
  );
}

const NON_ASCII = /[^\p{ASCII}]/u;
const HAS_NUMBER = /\p{N}/u;
const DIGIT_RUN = /\p{N}+/gu;

/**
 * The digit runs of texts (after NFKC, as {@link namesAndNumbers} reads them), distinct, sorted and joined.
 * Every digit is in a number or in a link, and folding a number keeps its digits, so two facts with the same
 * numbers and links always have the same key; the index only needs that. It runs on every fact of a
 * reconcile, so it stays one native scan: plain ASCII text (NFKC leaves it as it is) is not normalised, and
 * text without a digit is not scanned.
 */
function numbersAndLinksKey(texts: readonly string[]): string {
  if (texts.reduce((chars, text) => chars + text.length, 0) > NUMBERS_SCAN_MAX_CHARS) return '\u0003too long';
  const runs = new Set<string>();
  for (const text of texts) {
    if (!HAS_NUMBER.test(text)) continue;
    const normalized = NON_ASCII.test(text) ? text.normalize('NFKC') : text;
    for (const [run] of normalized.matchAll(DIGIT_RUN)) runs.add(run);
  }
  return [...runs].sort().join(' ');
}

function namesAndNumbers(texts: readonly string[]): {
  names: Set<string>;
  lowerWords: Set<string>;
  numbers: Set<string>;
  links: Set<string>;
} {
  const capitalised = new Set<string>();
  const lowerWords = new Set<string>();
  const numbers = new Set<string>();
  const links = new Set<string>();
  for (const text of texts) {
    const withoutLinks = text.normalize('NFKC').replace(LINK, (link) => {
      links.add(link.replace(TRAILING_PUNCTUATION, '').toLowerCase());
      return ' ';
    });
    for (const [word] of withoutLinks.matchAll(WORD)) {
      const folded = fold(word);
      if (HAS_DIGIT.test(word)) numbers.add(folded);
      else if (!HAS_UPPER.test(word)) lowerWords.add(folded);
      else if (!isStopWord(folded) && !NOT_NAMES.has(folded)) capitalised.add(folded);
    }
  }
  const names = new Set([...capitalised].filter((name) => !lowerWords.has(name)));
  return { names, lowerWords, numbers, links };
}

const featureCache = new WeakMap<FactText, FactFeatures>();
const detailCache = new WeakMap<FactText, FactDetails>();

/**
 * Features by text, across objects: each run loads memory into new objects, but most facts are unchanged
 * since the last run, so a daemon computes a fact's features once per text, not once per run. Cleared when it
 * passes {@link FEATURES_BY_TEXT_KEPT} entries (about 0.5 KB each: 25 MB at most).
 */
const featuresByText = new Map<string, FactFeatures>();
/** The same for {@link detailsOf}, for the facts candidates are compared with. */
const detailsByText = new Map<string, FactDetails>();

/** The indexed features of a fact or candidate, computed on first use and cached for the life of the object. */
export function featuresOf(text: FactText): FactFeatures {
  let features = featureCache.get(text);
  if (features !== undefined) return features;
  const textKey = `${text.title}\u0000${text.body}\u0000${text.why ?? ''}\u0000${text.howToApply ?? ''}`;
  features = featuresByText.get(textKey);
  if (features === undefined) {
    const key = normalizeText(text.body);
    const titleWords = contentWords(text.title);
    const words = [...titleWords, ...contentWordsOfNormalized(key)];
    const numbersKey = numbersAndLinksKey([text.title, text.body, text.why ?? '', text.howToApply ?? '']);
    features = { key, words, titleWords, distinctWords: distinctCount(words), numbersKey };
    if (featuresByText.size >= FEATURES_BY_TEXT_KEPT) featuresByText.clear();
    featuresByText.set(textKey, features);
  }
  featureCache.set(text, features);
  return features;
}

/** Empties the cache of features by text (a host short of memory; a benchmark measuring a cold run). */
export function forgetFeatures(): void {
  featuresByText.clear();
  detailsByText.clear();
}

/** Distinct items of a short list, without building a set (facts hold a few dozen words). */
function distinctCount(words: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < words.length; index += 1) {
    if (words.indexOf(words[index] as string) === index) count += 1;
  }
  return count;
}

/** The comparison details of a fact or candidate, computed on first use and cached like {@link featuresOf}. */
export function detailsOf(text: FactText): FactDetails {
  let details = detailCache.get(text);
  if (details !== undefined) return details;
  const textKey = `${text.title}\u0000${text.body}\u0000${text.why ?? ''}\u0000${text.howToApply ?? ''}`;
  details = detailsByText.get(textKey);
  if (details === undefined) {
    details = {
      ...wordsAndPairs([text.title, text.body]),
      ...namesAndNumbers([text.title, text.body, text.why ?? '', text.howToApply ?? '']),
    };
    if (detailsByText.size >= FEATURES_BY_TEXT_KEPT) detailsByText.clear();
    detailsByText.set(textKey, details);
  }
  detailCache.set(text, details);
  return details;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}

/** Whether every name of `a` is a name of `b` or an ordinary word there. */
function namesCovered(a: FactDetails, b: FactDetails): boolean {
  for (const name of a.names) if (!b.names.has(name) && !b.lowerWords.has(name)) return false;
  return true;
}

/**
 * Whether two facts name the same names and the same numbers (see the module comment): the condition for any
 * pure-code rule to merge them or let one supersede the other.
 */
export function sameNamesAndNumbers(left: FactText, right: FactText): boolean {
  const a = detailsOf(left);
  const b = detailsOf(right);
  return (
    sameSet(a.numbers, b.numbers) && sameSet(a.links, b.links) && namesCovered(a, b) && namesCovered(b, a)
  );
}

/** Distinct words of `words` that are in `set` (no set built for `words`: a few dozen words). */
export function sharedCount(words: readonly string[], set: ReadonlySet<string>): number {
  let shared = 0;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] as string;
    if (set.has(word) && words.indexOf(word) === index) shared += 1;
  }
  return shared;
}
