import path from 'node:path';
import { z } from 'zod';
import type { EmbeddingsConfig } from '../config/schema.js';
import type { Fact } from '../memory/types.js';
import { createBm25Index, createFieldedBm25Index, LANGUAGE_NAMES, textLanguage } from '../search/bm25.js';
import type { SessionPassages } from './session-passages.js';
import type { TranscriptPassageSource } from './transcript-passages.js';
import {
  fuseRankings,
  passagesSaidAsFacts,
  searchPassages,
  type PassageHit,
  type RecallKind,
} from './recall-fusion.js';
import { estimateTokens } from '../digest/estimate-tokens.js';
import { inDayRanges, splitQueryDates } from '../search/query-dates.js';
import {
  cosineSimilarity,
  createOpenAIEmbedder,
  vectorsFor,
  type EmbedTexts,
  type EmbeddingCacheFile,
} from './embeddings.js';
import { loadRecallDocuments, type RecallDocument } from './recall-documents.js';
import { checkedTool, type AgentTool } from './tool.js';
import { ownResult } from './own-results.js';
import { RECALL } from './tool-definitions.js';

export type { RecallDocument } from './recall-documents.js';
export type { RecallKind } from './recall-fusion.js';

/** Default number of results. */
export const DEFAULT_RECALL_LIMIT = 5;
/**
 * Default absolute minimum score of a lexical (BM25) match: none. A query in another language or with few
 * words shared scores low in absolute terms and still names the right fact ("Você sabe meu nome?"
 * scores 0.09): results are cut relative to the best one ({@link DEFAULT_RELATIVE_MIN_SCORE}) and the weak ones
 * flagged ({@link BM25_WEAK_SCORE}), never hidden by a fixed floor.
 */
export const DEFAULT_BM25_MIN_SCORE = 0;
/**
 * A lexical match under this normalised score is returned flagged `weak`: 0.2 ≈ one distinctive query word of
 * three or four found once in an average fact.
 */
export const BM25_WEAK_SCORE = 0.2;
/**
 * Results scoring under this share of the best result are dropped: 0.25 keeps what shares the best hit's
 * rarest word and drops what shares only a common one.
 */
export const DEFAULT_RELATIVE_MIN_SCORE = 0.25;
/**
 * Default minimum cosine similarity of an embeddings match. 0.3 is the usual floor for general-purpose
 * embedding models, where unrelated sentences land between 0 and 0.25.
 */
export const DEFAULT_EMBEDDINGS_MIN_SCORE = 0.3;
/** Name of the embeddings cache inside the cache directory. */
export const EMBEDDINGS_CACHE_FILE = 'embeddings.json';

/** One recalled fact, note or transcript passage. */
export interface RecallResult {
  /** Fact id (`f-…`), `note:<path>`, or `passage:<session id>#<message index>`. */
  readonly id: string;
  /** A fact that holds now, a fact a newer one replaced (`archived`), an agent's note, or a transcript passage. */
  readonly kind: RecallKind;
  /** A passage's session id. */
  readonly sessionId?: string;
  /** A fact's: the ids of the sessions it came from. */
  readonly sources?: readonly string[];
  readonly title: string;
  readonly text: string;
  /** `YYYY-MM-DD`: when the fact was last updated (else observed); a passage's: when it was said. */
  readonly date: string;
  /** 0..1; BM25 normalised, or cosine similarity with embeddings. */
  readonly score: number;
  /** True for a lexical match under {@link BM25_WEAK_SCORE}: the best there is, but little shared. */
  readonly weak: boolean;
}

export interface RecallQueryOptions {
  /** Most results returned. Default 5. */
  readonly limit?: number;
  /** Results under this absolute score are dropped. Default 0 (BM25) or 0.3 (embeddings). */
  readonly minScore?: number;
  /** Results under this share of the best result's score are dropped. Default 0.25. */
  readonly relativeMinScore?: number;
  /**
   * With a `rewriteQuery`, rewrite a query whose lexical results are empty or weak and search again. Default
   * true; the agent's automatic retrieval per message passes false (a model call per message is too dear).
   */
  readonly rewrite?: boolean;
  /** The moment relative dates in the query ("last week", "in March") are read against. Default: now. */
  readonly now?: Date;
  /**
   * Search the facts newer ones replaced too (superseded, archived). Default: when the query asks about the
   * past ({@link asksAboutThePast}).
   */
  readonly includePast?: boolean;
  /**
   * With `transcripts` given to `createRecall`, fuse the passages of the space's transcripts with the facts.
   * Default true; the agent's automatic retrieval per message passes false (its block holds facts).
   */
  readonly transcripts?: boolean;
}

/** What one query returned, and what it costs the model to read. */
export interface RecallAnswer {
  readonly results: RecallResult[];
  /** Tokens of the text the recall tool returns for these results (`estimateTokens`: characters / 4). */
  readonly tokens: number;
  /** Why the answer is facts only although transcripts were asked for (they could not be read). */
  readonly note?: string;
}

/**
 * Added to the lexical score of a fact dated in (or naming a day in) a range of days the query speaks of ("what
 * did we decide last week?"): 0.15 is about what one shared distinctive word adds, so the date lifts a fact
 * among those about the subject and brings forward a fact of that day when few words are shared.
 */
export const QUERY_DATE_BONUS = 0.15;

/**
 * Rewrites a query for a keyword search across languages and words: the key words, their synonyms, and their
 * translations into the languages the memory is written in (named in `languages`). One small model call.
 */
export type RewriteQuery = (query: string, languages: readonly string[]) => Promise<string>;

export type CreateRecallOptions = (
  | {
      /** Facts to search (only `active` ones are searched). */
      readonly facts: readonly Fact[];
      readonly memoryDir?: undefined;
    }
  | {
      /** The space's memory directory: its facts and the agent's notes are read again at every recall. */
      readonly memoryDir: string;
      readonly facts?: undefined;
    }
) & {
  /** An OpenAI-compatible `/embeddings` endpoint; without it ranking is lexical (BM25). */
  readonly embeddings?: EmbeddingsConfig | undefined;
  /** Overrides the HTTP embedder (tests, or a local model in-process). Used only with `embeddings`. */
  readonly embed?: EmbedTexts;
  /** Where `embeddings.json` is kept. Default `<memoryDir>/.dreamd`; with `facts` and no cacheDir, in memory only. */
  readonly cacheDir?: string;
  /**
   * Lexical mode only: a model that rewrites a query that found nothing, or only weak matches ("onde eu moro?"
   * against a note in English, "what did the customer order?" against "Compra 1 kg de Colômbia"), see
   * {@link RewriteQuery}. Without it, recall matches words and their stems only.
   */
  readonly rewriteQuery?: RewriteQuery;
  /**
   * Lexical mode only: the passages of the space's sessions (`createSessionPassages`). Each fact is then
   * searched with the message it came from as one more field (weight {@link RECALL_FIELD_WEIGHTS}.passage):
   * a question worded like the conversation ("who is visiting next month?") finds the fact worded like memory
   * ("Ana's cousin Bia lives in Lisbon"). Without it, facts only.
   */
  readonly passages?: SessionPassages;
  /**
   * The passages of the space's transcripts (`createTranscriptPassages`): each query then ranks them with
   * BM25 beside the facts, and the two rankings are fused (`recall-fusion.ts`), so a question whose answer
   * was never made a fact finds its session. Unreadable transcripts leave the facts alone, with a note.
   */
  readonly transcripts?: TranscriptPassageSource;
};

/** The languages the documents are written in, most common first (at most three). */
function documentLanguages(documents: readonly RecallDocument[]): string[] {
  const counts = new Map<string, number>();
  for (const document of documents) {
    const name = LANGUAGE_NAMES[textLanguage(`${document.title}\n${document.text}`)];
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name]) => name);
}

export interface Recall {
  /** `lexical` (BM25) or `embeddings`. */
  readonly mode: 'lexical' | 'embeddings';
  /** The best matches for the query, best first; `[]` means nothing relevant. */
  recall(query: string, options?: RecallQueryOptions): Promise<RecallResult[]>;
  /** The same results with the tokens they cost and why transcripts were left out, if they were. */
  search?(query: string, options?: RecallQueryOptions): Promise<RecallAnswer>;
}

/**
 * Words of a question about what used to be true ("where did I live before?", "what was my old job?"): with
 * them, recall searches the facts newer ones replaced too (superseded, archived), each marked with until when
 * it held. English only; `includePast` asks for them in any language.
 */
const PAST_QUERY =
  /\b(before|previous(?:ly)?|used to|earlier|former(?:ly)?|old|older|no longer|any ?more|originally|at first|until|past|changed?)\b/i;

/** Whether a query asks about what used to be true (see {@link PAST_QUERY}). */
export function asksAboutThePast(query: string): boolean {
  return PAST_QUERY.test(query);
}

function factText(fact: Fact): string {
  return [
    fact.body,
    fact.why === undefined ? '' : `Why: ${fact.why}`,
    fact.howToApply === undefined ? '' : `How to apply: ${fact.howToApply}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** Documents of the active facts; with `past`, also of the facts newer ones replaced, marked as such. */
function documentsFromFacts(facts: readonly Fact[], past = false): RecallDocument[] {
  return facts
    .filter((fact) => fact.status === 'active' || (past && fact.supersededBy !== undefined))
    .map((fact) => ({
      id: fact.id,
      title: fact.title,
      text:
        fact.status === 'active'
          ? factText(fact)
          : `${factText(fact)}\n(Previously, before ${fact.supersededOn ?? '?'}; replaced by ${fact.supersededBy ?? '?'}.)`,
      date: fact.updated || fact.observed,
      type: fact.type,
      sources: fact.sources,
      ...(fact.status === 'active' ? {} : { past: true }),
    }));
}

/** The documents a query searches: the facts that hold now, and those that held before when it asks. */
function forQuery(
  documents: readonly RecallDocument[],
  query: string,
  options: RecallQueryOptions,
): RecallDocument[] {
  const past = options.includePast ?? asksAboutThePast(query);
  return past ? [...documents] : documents.filter((document) => document.past !== true);
}

/**
 * Each fact with the passage it came from: of the messages of its source sessions, the one that shares most
 * with the fact (BM25 with the fact's title and text as the query), when any shares a word. A fact keeps the
 * session ids it came from, not the message, so the passage is found by its words; `cache` keeps the choice
 * per fact text and sources, so a recall aligns only facts it has not seen.
 */
export function withPassages(
  documents: readonly RecallDocument[],
  passages: ReadonlyMap<string, readonly string[]>,
  cache: Map<string, string | undefined> = new Map(),
): RecallDocument[] {
  return documents.map((document) => {
    if (document.sources === undefined || document.sources.length === 0) return document;
    const key = `${document.sources.join(',')}\u0000${document.title}\u0000${document.text}`;
    let passage = cache.get(key);
    if (!cache.has(key)) {
      const candidates = document.sources.flatMap((source) => passages.get(source) ?? []);
      const scores = createBm25Index(candidates).score(`${document.title}\n${document.text}`);
      let best = -1;
      scores.forEach((score, i) => {
        if (score > 0 && (best === -1 || score > scores[best]!)) best = i;
      });
      passage = best === -1 ? undefined : candidates[best];
      cache.set(key, passage);
    }
    return passage === undefined ? document : { ...document, passage };
  });
}

/**
 * Weights of a document's fields in lexical recall (BM25F): the title names the subject in a few words and
 * counts twice a word of the body; the type ("project", "feedback") and the date written out ("2026-03-14
 * March 2026") count half, so "what did I decide for the project in March?" prefers project facts of March
 * without letting a month outweigh the subject. Type and date only refine: a fact that shares no word of the
 * query in its title, body or passage is not found by its type or date alone.
 */
export const RECALL_FIELD_WEIGHTS = { title: 2, text: 1, type: 0.5, date: 0.5, passage: 0.5 } as const;

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** A `YYYY-MM-DD` date with its month and year in words, for the date field: "2026-03-14 March 2026". */
export function dateWords(date: string): string {
  const match = /^(\d{4})-(\d{2})/.exec(date);
  const month = match === null ? undefined : MONTH_NAMES[Number(match[2]) - 1];
  return match === null || month === undefined ? date : `${date} ${month} ${match[1]}`;
}

function kindOf(document: RecallDocument): RecallKind {
  if (document.id.startsWith('note:')) return 'note';
  return document.past === true ? 'archived' : 'fact';
}

/** A passage found, as a result: its id names its session and message. */
function passageResult({ passage, score }: PassageHit): RecallResult {
  return {
    id: `passage:${passage.sessionId}#${passage.message}`,
    kind: 'passage',
    sessionId: passage.sessionId,
    title: `session ${passage.sessionId}, ${passage.role}`,
    text: passage.text,
    date: passage.date,
    score,
    weak: score < BM25_WEAK_SCORE,
  };
}

function rank(
  documents: readonly RecallDocument[],
  scores: readonly number[],
  options: RecallQueryOptions,
  minScore: number,
  weakScore: number,
): RecallResult[] {
  const limit = options.limit ?? DEFAULT_RECALL_LIMIT;
  const floor = options.minScore ?? minScore;
  const relative = options.relativeMinScore ?? DEFAULT_RELATIVE_MIN_SCORE;
  const best = Math.max(0, ...scores);
  return (
    documents
      .map((document, i) => ({
        ...document,
        kind: kindOf(document),
        score: scores[i] ?? 0,
        weak: (scores[i] ?? 0) < weakScore,
      }))
      .filter((result) => result.score > 0 && result.score >= floor && result.score >= relative * best)
      // Ties by recency, then by title: the same memory ranks the same whatever ids its facts were given.
      .sort(
        (a, b) =>
          b.score - a.score ||
          b.date.localeCompare(a.date) ||
          a.title.localeCompare(b.title) ||
          a.id.localeCompare(b.id),
      )
      .slice(0, Math.max(0, limit))
  );
}

/**
 * Lexical ranking of documents for a query: BM25F over title, text, type and date weighted as
 * {@link RECALL_FIELD_WEIGHTS} says, facts of the days the query names lifted by {@link QUERY_DATE_BONUS}, ties
 * by recency, cut as {@link rank} says.
 */
export function searchDocuments(
  documents: readonly RecallDocument[],
  query: string,
  options: RecallQueryOptions = {},
): RecallResult[] {
  const weights = RECALL_FIELD_WEIGHTS;
  const { ranges, words } = splitQueryDates(query, options.now ?? new Date());
  const index = createFieldedBm25Index(
    documents.map((document) => [
      { text: document.title, weight: weights.title },
      { text: document.text, weight: weights.text },
      { text: document.type ?? '', weight: weights.type, refinesOnly: true },
      { text: dateWords(document.date), weight: weights.date, refinesOnly: true },
      { text: document.passage ?? '', weight: weights.passage },
    ]),
  );
  const scores = index
    .score(words)
    .map((score, i) =>
      inDayRanges(ranges, documents[i]?.date ?? '', documents[i]?.text ?? '')
        ? Math.min(1, score + QUERY_DATE_BONUS)
        : score,
    );
  return rank(documents, scores, options, DEFAULT_BM25_MIN_SCORE, BM25_WEAK_SCORE);
}

/** One fact found by {@link searchFacts}. */
export interface FactHit {
  readonly fact: Fact;
  /** Normalised BM25 score, 0..1. */
  readonly score: number;
  /** Under {@link BM25_WEAK_SCORE}. */
  readonly weak: boolean;
}

/**
 * The active facts most relevant to a text, best first: the same search as recall (Unicode words, CJK pairs,
 * per-language stop words, no absolute floor), for callers that hold facts rather than a memory directory,
 * such as choosing the "current memory" shown with a consolidation call. Default limit 5.
 */
export function searchFacts(
  facts: readonly Fact[],
  query: string,
  options: RecallQueryOptions = {},
): FactHit[] {
  const byId = new Map(facts.map((fact) => [fact.id, fact]));
  return searchDocuments(documentsFromFacts(facts), query, options).flatMap((result) => {
    const fact = byId.get(result.id);
    return fact === undefined ? [] : [{ fact, score: result.score, weak: result.weak }];
  });
}

/**
 * Creates recall over one space's facts. Lexical BM25 by default; with `embeddings`, cosine similarity of
 * vectors from the endpoint, fact vectors cached on disk keyed by fact id and content hash. Active facts are
 * searched; the facts newer ones replaced (superseded, and the archive of a memory directory) only for a query
 * about the past. Only the given facts or the given memory directory: a space never sees another's.
 */
export function createRecall(options: CreateRecallOptions): Recall {
  const memoryDir = options.memoryDir === undefined ? undefined : path.resolve(options.memoryDir);
  const loadDocuments = async (): Promise<RecallDocument[]> =>
    memoryDir === undefined
      ? documentsFromFacts(options.facts ?? [], true)
      : loadRecallDocuments(memoryDir, (facts) => documentsFromFacts(facts, true));
  const rankFacts =
    options.embeddings === undefined
      ? lexicalRanking(options, loadDocuments)
      : embeddingsRanking(options.embeddings, options, memoryDir, loadDocuments);
  const transcripts = options.transcripts;

  const search = async (query: string, queryOptions: RecallQueryOptions = {}): Promise<RecallAnswer> => {
    const facts = await rankFacts(query, queryOptions);
    const answer = (results: RecallResult[], note?: string): RecallAnswer => ({
      results,
      tokens: estimateTokens(formatRecallResults(query, results, note)),
      ...(note === undefined ? {} : { note }),
    });
    if (transcripts === undefined || queryOptions.transcripts === false) return answer(facts.results);
    let note: string | undefined;
    let passages: PassageHit[] = [];
    try {
      const index = await transcripts();
      if (!index.readable)
        note = `Transcripts unreadable (${index.problems[0] ?? 'no folder could be listed'}): facts only.`;
      passages = searchPassages(index, facts.query, {
        limit: queryOptions.limit ?? DEFAULT_RECALL_LIMIT,
        except: passagesSaidAsFacts(index, facts.results),
        relativeMinScore: queryOptions.relativeMinScore ?? DEFAULT_RELATIVE_MIN_SCORE,
        now: queryOptions.now ?? new Date(),
      });
    } catch (error) {
      note = `Transcripts unreadable (${error instanceof Error ? error.message : String(error)}): facts only.`;
    }
    const fused = fuseRankings(
      facts.results,
      passages.map(passageResult),
      queryOptions.limit ?? DEFAULT_RECALL_LIMIT,
    );
    return answer(fused, note);
  };
  return {
    mode: options.embeddings === undefined ? 'lexical' : 'embeddings',
    search,
    recall: async (query, queryOptions) => (await search(query, queryOptions)).results,
  };
}

/** Ranks the facts for a query; `query` is what was searched (the question, and its rewrite if any). */
type FactRanking = (
  query: string,
  options: RecallQueryOptions,
) => Promise<{ results: RecallResult[]; query: string }>;

function lexicalRanking(
  options: CreateRecallOptions,
  loadDocuments: () => Promise<RecallDocument[]>,
): FactRanking {
  const rewriteQuery = options.rewriteQuery;
  const passages = options.passages;
  const aligned = new Map<string, string | undefined>();
  return async (query, queryOptions) => {
    const loaded = forQuery(await loadDocuments(), query, queryOptions);
    const documents = passages === undefined ? loaded : withPassages(loaded, await passages(), aligned);
    const found = searchDocuments(documents, query, queryOptions);
    const weak = found.length === 0 || found[0]?.weak === true;
    if (rewriteQuery === undefined || queryOptions.rewrite === false || !weak || documents.length === 0) {
      return { results: found, query };
    }
    const rewritten = (await rewriteQuery(query, documentLanguages(documents))).trim();
    if (rewritten === '') return { results: found, query };
    // The question and its rewrite together: what either finds, ranked by what they share.
    const both = `${query}\n${rewritten}`;
    return { results: searchDocuments(documents, both, queryOptions), query: both };
  };
}

function embeddingsRanking(
  embeddings: EmbeddingsConfig,
  options: CreateRecallOptions,
  memoryDir: string | undefined,
  loadDocuments: () => Promise<RecallDocument[]>,
): FactRanking {
  const embed = options.embed ?? createOpenAIEmbedder(embeddings);
  const cacheDir =
    options.cacheDir ?? (memoryDir === undefined ? undefined : path.join(memoryDir, '.dreamd'));
  const cacheFile = cacheDir === undefined ? undefined : path.join(cacheDir, EMBEDDINGS_CACHE_FILE);
  const memo = new Map<string, EmbeddingCacheFile['entries']>();
  return async (query, queryOptions) => {
    const documents = forQuery(await loadDocuments(), query, queryOptions);
    if (documents.length === 0) return { results: [], query };
    const embedded = documents.map((document) => ({
      id: document.id,
      text: `${document.title}\n${document.text}`,
    }));
    const vectors = await vectorsFor(embedded, { embed, model: embeddings.model, cacheFile, memo });
    const [queryVector] = await embed([query]);
    if (queryVector === undefined)
      throw new Error('the embeddings endpoint returned no vector for the query');
    const scores = documents.map((document) => cosineSimilarity(queryVector, vectors.get(document.id) ?? []));
    return { results: rank(documents, scores, queryOptions, DEFAULT_EMBEDDINGS_MIN_SCORE, 0), query };
  };
}

/** What a result is, in the words the model reads. */
const KIND_WORDS: Readonly<Record<RecallKind, string>> = {
  fact: 'fact',
  archived: 'archived fact',
  note: 'note',
  passage: 'transcript passage',
};

/**
 * Formats results for the model: one line each with id (a passage: its session), date, what it is and score,
 * or "nothing relevant"; a note (transcripts unreadable) last.
 */
export function formatRecallResults(query: string, results: readonly RecallResult[], note?: string): string {
  const footer = note === undefined ? '' : `\n\n(${note})`;
  if (results.length === 0) {
    return `Nothing relevant in memory for "${query}". Do not guess: ask the user if you need this.${footer}`;
  }
  return (
    results
      .map((result) => {
        const what = `${KIND_WORDS[result.kind]}, score ${result.score.toFixed(2)}${result.weak ? ', weak match' : ''}`;
        return result.kind === 'passage'
          ? `[session ${result.sessionId ?? '?'}] ${result.date} (${what}) ${result.title}\n${result.text}`
          : `[${result.id}] ${result.date} (${what}) ${result.title}\n${result.text}`;
      })
      .join('\n\n') + footer
  );
}

/** The `recall` tool for the agent: searches the space's memory by query. */
/** What the `recall` tool accepts: the shape of its definition in `tool-definitions.ts`. */
export const RecallInput = z.object({ query: z.string().min(1), limit: z.int().min(1).max(20).optional() });

export function createRecallTool(recall: Recall, defaults: RecallQueryOptions = {}): AgentTool {
  return checkedTool(RECALL, RecallInput, async ({ query, limit }) => {
    const queryOptions = { ...defaults, ...(limit === undefined ? {} : { limit }) };
    const answer =
      recall.search === undefined
        ? { results: await recall.recall(query, queryOptions), note: undefined }
        : await recall.search(query, queryOptions);
    // Memory read back: the note screen knows it as such by this mark, not by the tool's name.
    return ownResult(formatRecallResults(query, answer.results, answer.note));
  });
}
