import { createHash } from 'node:crypto';
import { normalizeText } from '../../util/normalize-text.js';

/**
 * Deterministic text similarity for deduplicating facts: no embeddings, no model call, same answer on every
 * machine. Text is normalised (Unicode NFKC, lower case, accents and punctuation removed), split into words,
 * common English stop words dropped and a plural "s" trimmed, then compared as sets of words and word pairs
 * (bodies) or as word sequences (titles). The thresholds the steps hold these scores against are in
 * `tunables.ts`.
 */

const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'but',
  'of',
  'to',
  'in',
  'on',
  'at',
  'for',
  'with',
  'by',
  'from',
  'as',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'being',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'their',
  'his',
  'her',
  'he',
  'she',
  'they',
  'them',
  's',
  'has',
  'have',
  'had',
  'do',
  'does',
  'did',
  'so',
  'than',
  'then',
  'into',
  'about',
  'which',
  'who',
  'whom',
  'what',
]);

/** Stop words, for callers that split text themselves (features.ts). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** A plural "s" trimmed from words of more than three letters ("docs" → "doc", "class" stays). */
export function trimPlural(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

export { normalizeText };

/** Content words of a normalised text ({@link normalizeText}), in order. */
export function contentWordsOfNormalized(normalized: string): string[] {
  if (normalized === '') return [];
  const words: string[] = [];
  for (const word of normalized.split(' ')) if (!STOP_WORDS.has(word)) words.push(trimPlural(word));
  return words;
}

/** Content words of a text in order (normalised, stop words dropped, plural "s" trimmed). */
export function contentWords(text: string): string[] {
  return contentWordsOfNormalized(normalizeText(text));
}

/** |a ∩ b| / |a ∪ b|; two empty sets score 0 (nothing to say they are the same). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared += 1;
  return shared / (a.size + b.size - shared);
}

function bigrams(words: readonly string[]): string[] {
  const pairs: string[] = [];
  for (let index = 0; index + 1 < words.length; index += 1) pairs.push(`${words[index]} ${words[index + 1]}`);
  return pairs;
}

/** The words and word pairs of each part; pairs never span two parts (title and body stay apart). */
export function wordsAndPairs(parts: readonly string[]): { words: Set<string>; pairs: Set<string> } {
  const words = new Set<string>();
  const pairs = new Set<string>();
  for (const part of parts) {
    const partWords = contentWords(part);
    for (const word of partWords) words.add(word);
    for (const pair of bigrams(partWords)) pairs.add(pair);
  }
  return { words, pairs };
}

/**
 * Similarity of two texts, 0..1: the mean of the Jaccard index over their content words and over their
 * adjacent word pairs. Words alone miss order ("tabs over spaces" vs "spaces over tabs"); pairs alone punish
 * rewording too hard; the mean keeps both in view. Each argument is a list of parts (e.g. title and body).
 */
export function textSimilarity(a: readonly string[], b: readonly string[]): number {
  const left = wordsAndPairs(a);
  const right = wordsAndPairs(b);
  return (jaccard(left.words, right.words) + jaccard(left.pairs, right.pairs)) / 2;
}

/**
 * Order-aware similarity of two word sequences, 0..1: 2 × (longest common subsequence) / (total length), the
 * Dice coefficient over subsequences. Two empty sequences score 0.
 */
export function sequenceSimilarity(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  // One row of the classic LCS table at a time: titles are a few words, so this is a few dozen steps.
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const word of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let index = 1; index <= b.length; index += 1) {
      current[index] =
        b[index - 1] === word
          ? (previous[index - 1] ?? 0) + 1
          : Math.max(previous[index] ?? 0, current[index - 1] ?? 0);
    }
    previous = current;
  }
  return (2 * (previous[b.length] ?? 0)) / (a.length + b.length);
}

/**
 * True when two titles of one subject differ only in what they say of it, at their end: after the first word
 * where they part, they share no word. "Kaito takes saxophone lessons" and "… violin lessons" part at the
 * instrument and say the same after it, so this is false for them only if a later word is shared in both
 * ("Plot 3 at the north site grows fennel" and "Plot 3 at the river site grows chard" part at the site, then
 * share "site grows": two plots, not one plot's new crop). Titles with a shared word after the parting point
 * name a different thing in the middle, a qualifier that makes them two subjects.
 */
export function differsOnlyAtTheEnd(a: readonly string[], b: readonly string[]): boolean {
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at += 1;
  const rest = new Set(a.slice(at));
  return !b.slice(at).some((word) => rest.has(word));
}

/** {@link sequenceSimilarity} over the content words of two titles, in order. */
export function titleSimilarity(a: string, b: string): number {
  return sequenceSimilarity(contentWords(a), contentWords(b));
}

/** Number of distinct content words of a title. */
export function titleWordCount(title: string): number {
  return new Set(contentWords(title)).size;
}

/**
 * The normalised body of a fact: two facts with the same key say the same thing whatever their type, spacing,
 * case, punctuation or accents (the same fact filed under two types is one fact).
 */
export function bodyKey(body: string): string {
  return normalizeText(body);
}

/**
 * Hash of the type and normalised text of a fact: two facts with the same key are exact duplicates whatever their
 * spacing, case, punctuation or accents. The title is left out: the same body under two titles is one fact.
 */
export function exactKey(type: string, body: string): string {
  return createHash('sha256')
    .update(`${type}\n${normalizeText(body)}`)
    .digest('hex');
}
