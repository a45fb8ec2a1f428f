/**
 * A small BM25 ranking (Okapi BM25) over a handful to a few thousand memory facts. Pure functions.
 *
 * Constants: `k1 = 1.2` (how quickly repeated terms stop adding score: after ~3 occurrences little more is
 * gained, which suits one-paragraph facts) and `b = 0.75` (how much a long fact is penalised relative to the
 * average length). Both are the usual defaults from the literature (Robertson & Zaragoza, 2009).
 *
 * Scores are normalised to 0..1 by dividing by the best score the query could reach (every query term
 * present, many times, in a fact of average length): `sum(idf(t) * (k1 + 1))`. A query whose rare words are
 * all missing therefore scores low, which is what the minimum score of recall relies on.
 */

import { createRequire } from 'node:module';
import * as stopwords from 'stopword';

/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;
/** BM25 length normalisation. */
export const BM25_B = 0.75;

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does doesn don for from had has have he her his how i if in ' +
    'into is it its just me my no not of on or our she so some than that the their them then there these they this ' +
    'to too us was we were what when where which who why will with would you your yours about any all also am ' +
    'recommend tell please know remember'
  ).split(' '),
);

/** Languages with a stemmer: English and the languages the date parser and the stop words know. */
export type StemLanguage = 'eng' | 'por' | 'spa' | 'fra' | 'deu';

/**
 * Snowball stemmers of nlp.js (`@nlpjs/lang-*`, maintained, MIT), one module per language, each loaded the first
 * time a text of its language is stemmed (about 10 ms and 2 MB each), so a process that reads only English
 * loads one. Deep paths: the language packages' own entry points load sentiment lexicons recall never uses.
 */
const STEMMER_MODULES: Readonly<Record<StemLanguage, string>> = {
  eng: '@nlpjs/lang-en-min/src/stemmer-en',
  por: '@nlpjs/lang-pt/src/stemmer-pt',
  spa: '@nlpjs/lang-es/src/stemmer-es',
  fra: '@nlpjs/lang-fr/src/stemmer-fr',
  deu: '@nlpjs/lang-de/src/stemmer-de',
};

const requireModule = createRequire(import.meta.url);
const stemmers = new Map<StemLanguage, (word: string) => string>();
/**
 * Stems already computed, per language: texts repeat their words, and ranking 10,000 facts stems about
 * 300,000 words. Cleared past 100,000 entries (a few MB), so a long-lived daemon does not grow without bound.
 */
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 100_000;

function stemmerFor(language: StemLanguage): (word: string) => string {
  let stemmer = stemmers.get(language);
  if (stemmer === undefined) {
    const Stemmer = requireModule(STEMMER_MODULES[language]) as new () => { stemWord(word: string): string };
    const instance = new Stemmer();
    stemmer = (word) => instance.stemWord(word);
    stemmers.set(language, stemmer);
  }
  return stemmer;
}

/**
 * The Snowball stem of a folded word in a language (English by default): "moro", "mora" and "morar" → "mor";
 * "restaurants" → "restaur". A stem shorter than three letters keeps the word, so short words stay apart.
 */
export function stem(word: string, language: StemLanguage = 'eng'): string {
  const key = `${language}:${word}`;
  const cached = stemCache.get(key);
  if (cached !== undefined) return cached;
  const stemmed = stemmerFor(language)(word);
  const result = stemmed.length >= 3 ? stemmed : word;
  if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
  stemCache.set(key, result);
  return result;
}

/**
 * Stop words of the other languages recall reads, from the `stopword` package (short lists of the commonest
 * function words: 59 to 106 words each). A text drops the words of the language it uses most (see
 * {@link tokenize}), never the union: German "war" or Spanish "son" are English content words.
 */
const OTHER_LANGUAGES: ReadonlyMap<StemLanguage, ReadonlySet<string>> = new Map(
  (
    Object.entries({ por: stopwords.por, spa: stopwords.spa, fra: stopwords.fra, deu: stopwords.deu }) as [
      StemLanguage,
      readonly string[],
    ][]
  ).map(([language, words]) => [language, new Set(words.map(fold))]),
);

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

function fold(word: string): string {
  return word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Overlapping pairs of characters ("名字是" → 名字, 字是); a lone character stays itself. */
function bigrams(run: string): string[] {
  const characters = [...run];
  if (characters.length === 1) return characters;
  const pairs: string[] = [];
  for (let index = 0; index + 1 < characters.length; index += 1) {
    pairs.push(`${characters[index]}${characters[index + 1]}`);
  }
  return pairs;
}

/**
 * The language whose stop words the words hold most, when they hold at least one more than English's; else
 * English. "onde eu moro" is Portuguese; "the bar in Lisboa" stays English.
 */
function mostUsedLanguage(words: readonly string[]): StemLanguage {
  let english = 0;
  for (const word of words) if (STOPWORDS.has(word)) english += 1;
  let best: { language: StemLanguage; hits: number } = { language: 'eng', hits: english };
  for (const [language, list] of OTHER_LANGUAGES) {
    let hits = 0;
    for (const word of words) if (list.has(word)) hits += 1;
    if (hits > best.hits) best = { language, hits };
  }
  return best.language;
}

/** Names of the stemmed languages, for a person or a model. */
export const LANGUAGE_NAMES: Readonly<Record<StemLanguage, string>> = {
  eng: 'English',
  por: 'Portuguese',
  spa: 'Spanish',
  fra: 'French',
  deu: 'German',
};

/** The language of a text as {@link tokenize} decides it (by stop words; English when none stands out). */
export function textLanguage(text: string): StemLanguage {
  return mostUsedLanguage(fold(text).split(/[^\p{L}\p{N}]+/u));
}

/**
 * Words of a text for ranking: Unicode NFKD with accents removed ("Você" → "voce"), lower case, split on
 * anything that is not a letter or digit; runs of Chinese, Japanese or Korean characters split into
 * overlapping character pairs (no spaces to split on: "名字" then matches inside "我的名字是"); English stop
 * words dropped, and those of the text's own language when it is Portuguese, Spanish, French or German; the
 * Snowball stemmer of that language ({@link stem}) on the rest, each word giving its stem and, when it differs,
 * itself.
 */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  for (const part of fold(text).split(/[^\p{L}\p{N}]+/u)) {
    if (part === '') continue;
    if (!CJK.test(part)) {
      words.push(part);
      continue;
    }
    // A part may mix scripts ("iphone的"): CJK runs become pairs, the rest stays whole.
    let last = 0;
    for (const match of part.matchAll(CJK_RUN)) {
      if (match.index > last) words.push(part.slice(last, match.index));
      words.push(...bigrams(match[0]));
      last = match.index + match[0].length;
    }
    if (last < part.length) words.push(part.slice(last));
  }
  const language = mostUsedLanguage(words);
  const ownStopwords = OTHER_LANGUAGES.get(language);
  const tokens: string[] = [];
  for (const word of words) {
    if ((word.length < 2 && !CJK.test(word)) || STOPWORDS.has(word) || ownStopwords?.has(word)) continue;
    if (CJK.test(word) || /^\p{N}+$/u.test(word)) {
      tokens.push(word);
      continue;
    }
    // The stem and, when it differs, the word itself: a name or a word shared by two languages ("Lisboa" in an
    // English question and a Portuguese fact) still matches where the two languages' stemmers cut it apart.
    const stemmed = stem(word, language);
    tokens.push(stemmed);
    if (stemmed !== word) tokens.push(word);
  }
  return tokens;
}

/** An index built once over a set of texts. */
export interface Bm25Index {
  readonly size: number;
  /** Normalised score (0..1) of every document for the query, in document order. */
  score(query: string): number[];
}

/** A BM25 index whose scores can also be read unnormalised, to compare the matches of different queries. */
export interface PlainBm25Index extends Bm25Index {
  /**
   * The score of every document before normalisation, in document order: a rare shared word weighs the same
   * whatever else the query says, so the matches of a short and of a long query compare.
   */
  rawScore(query: string): number[];
}

/** Builds a BM25 index over `documents` (plain texts, in the order scores are returned). */
export function createBm25Index(documents: readonly string[]): PlainBm25Index {
  const termCounts = documents.map((text) => {
    const counts = new Map<string, number>();
    for (const token of tokenize(text)) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const lengths = termCounts.map((counts) => [...counts.values()].reduce((sum, n) => sum + n, 0));
  const averageLength = lengths.reduce((sum, n) => sum + n, 0) / Math.max(1, lengths.length) || 1;
  const total = documents.length;
  const idf = inverseDocumentFrequency(termCounts.map((counts) => counts.keys()));

  const raw = (terms: readonly string[]): number[] =>
    termCounts.map((counts, i) => {
      const lengthFactor = 1 - BM25_B + (BM25_B * (lengths[i] ?? 0)) / averageLength;
      let score = 0;
      for (const term of terms) {
        const frequency = counts.get(term) ?? 0;
        if (frequency === 0) continue;
        score += (idf(term) * frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * lengthFactor);
      }
      return score;
    });
  return {
    size: total,
    score(query) {
      const terms = [...new Set(tokenize(query))];
      const best = terms.reduce((sum, term) => sum + idf(term) * (BM25_K1 + 1), 0);
      if (best === 0) return termCounts.map(() => 0);
      return raw(terms).map((score) => Math.min(1, score / best));
    },
    rawScore(query) {
      return raw([...new Set(tokenize(query))]);
    },
  };
}

/** One field of a document for {@link createFieldedBm25Index}, with its weight (a title counts more than a body). */
export interface WeightedField {
  readonly text: string;
  readonly weight: number;
  /**
   * Only refines: a document none of whose other fields holds a query word scores 0 whatever this field holds
   * (a fact's type or date words lift a fact about the subject, they never find one on their own).
   */
  readonly refinesOnly?: boolean;
}

/**
 * BM25F (Robertson, Zaragoza & Taylor, 2004): each field's term frequency is normalised by the field's own
 * average length and weighted, the weighted frequencies summed, then saturated once, so a word in a short,
 * heavy field (a title) counts more than the same word in a long body, and a word in both fields does not count
 * twice at full weight. Documents are arrays of fields in the same order (field `i` of every document is the
 * same kind). Scores are normalised to 0..1 as {@link createBm25Index}'s are. A field marked `refinesOnly` adds
 * to a document that another field found, and finds none alone.
 */
export function createFieldedBm25Index(documents: readonly (readonly WeightedField[])[]): Bm25Index {
  const fieldCount = Math.max(0, ...documents.map((fields) => fields.length));
  const counts = documents.map((fields) =>
    fields.map((field) => {
      const terms = new Map<string, number>();
      for (const token of tokenize(field.text)) terms.set(token, (terms.get(token) ?? 0) + 1);
      return terms;
    }),
  );
  const lengthOf = (terms: Map<string, number> | undefined) =>
    terms === undefined ? 0 : [...terms.values()].reduce((sum, n) => sum + n, 0);
  const averages = Array.from({ length: fieldCount }, (_, field) => {
    const total = counts.reduce((sum, fields) => sum + lengthOf(fields[field]), 0);
    return total / Math.max(1, documents.length) || 1;
  });
  const total = documents.length;
  const idf = inverseDocumentFrequency(
    counts.map((fields) => new Set(fields.flatMap((terms) => [...terms.keys()]))),
  );
  return {
    size: total,
    score(query) {
      const terms = [...new Set(tokenize(query))];
      const best = terms.reduce((sum, term) => sum + idf(term) * (BM25_K1 + 1), 0);
      return counts.map((fields, i) => {
        if (best === 0) return 0;
        let score = 0;
        let found = false;
        for (const term of terms) {
          let weighted = 0;
          fields.forEach((terms, field) => {
            const frequency = terms.get(term) ?? 0;
            if (frequency === 0) return;
            if (documents[i]?.[field]?.refinesOnly !== true) found = true;
            const lengthFactor = 1 - BM25_B + (BM25_B * lengthOf(terms)) / (averages[field] ?? 1);
            weighted += ((documents[i]?.[field]?.weight ?? 1) * frequency) / lengthFactor;
          });
          if (weighted === 0) continue;
          // Saturated once over all fields: a word found once in a field of weight 1 and average length scores as
          // in plain BM25, and no weight lifts a word past what many occurrences could reach.
          score += (idf(term) * weighted * (BM25_K1 + 1)) / (weighted + BM25_K1);
        }
        return found ? Math.min(1, score / best) : 0;
      });
    },
  };
}

/**
 * The idf of a term over documents given as their distinct terms: BM25+ style, never negative,
 * ln(1 + (N - n + 0.5) / (n + 0.5)). One function for plain BM25 and BM25F.
 */
function inverseDocumentFrequency(documentTerms: readonly Iterable<string>[]): (term: string) => number {
  const documentFrequency = new Map<string, number>();
  for (const terms of documentTerms) {
    for (const term of new Set(terms)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  }
  const total = documentTerms.length;
  return (term) => {
    const n = documentFrequency.get(term) ?? 0;
    return Math.log(1 + (total - n + 0.5) / (n + 0.5));
  };
}
