/**
 * The "current memory" list of each extraction call: which facts the model sees, so it can name the one a new
 * fact updates (`replaces`). Pure.
 *
 * Each call sees, inside a token budget counted against the call (200 tokens plus a tenth of its digest's):
 * 1. the facts produced by earlier calls of the same run (an update later in one backlog must see them),
 * 2. the facts related to what the digest's messages say, by BM25 (the same ranking as recall) over title, hook
 *    and body, **each message of the user its own query**: a fact is found by the one message that talks about
 *    it, however far back in memory it is and whatever else the digest says (see {@link relatedFacts}). A
 *    digest without user messages (a transcript of tool lines) is one query, as a whole;
 * 3. the most recently updated facts, for what the words of the digest do not name.
 * A fifth of the budget is kept for 3 so a digest full of common words cannot crowd out recent facts.
 *
 * When a run makes two calls or more and memory is large, a **stable part** (the top-ranked facts, the same
 * bytes in every call of the run) goes first, in the cached prefix with the instructions, sized so the prefix
 * passes the model's smallest cacheable prompt (4,096 tokens on Claude Haiku 4.5): later calls read it at a
 * tenth of the input price. A single call gains nothing from a cache write (it costs 1.25 × input), so it
 * gets no stable part; scheduled runs are hours apart, past any cache lifetime, so nothing is shared across runs.
 */
import { createBm25Index } from '../../search/bm25.js';
import { CHARS_PER_TOKEN } from '../../digest/estimate-tokens.js';
import { USER_LINE } from '../../digest/plan-batches.js';
import { renderMemoryListLine, type MemoryListEntry } from './extraction.js';
import {
  MIN_CACHED_PREFIX_TOKENS,
  MEMORY_SHARE_OF_DIGEST,
  MEMORY_FLOOR_TOKENS,
  RECENT_SHARE,
  MATCHES_PER_MESSAGE,
  MAX_QUERIES,
} from './tunables.js';

/** A fact as the selector sees it: its index line, what it is searched by, and its date. */
export interface MemoryListFact extends MemoryListEntry {
  /** Title, hook and body: the text BM25 matches against the digest. */
  readonly searchText: string;
  /** YYYY-MM-DD the fact's text was last observed. */
  readonly updated: string;
}

/** A speaker's label at the start of a message of several people ("Ana: …"): it says who speaks, not about what. */
const SPEAKER_LABEL = /^[\p{Lu}][\p{L}'-]{0,30}: /u;

/**
 * The queries of a digest: one per message of the user (the date, role and a speaker's label stripped), or the whole digest when it
 * has none. Past {@link MAX_QUERIES} the rest are joined into the last one, so a huge digest costs a bounded search.
 */
export function digestQueries(digestText: string): string[] {
  const queries: string[] = [];
  for (const line of digestText.split('\n')) {
    const said = USER_LINE.test(line) ? line.replace(USER_LINE, '').replace(SPEAKER_LABEL, '') : undefined;
    if (said !== undefined && said.trim() !== '') queries.push(said);
  }
  if (queries.length === 0) return digestText.trim() === '' ? [] : [digestText];
  if (queries.length <= MAX_QUERIES) return queries;
  return [...queries.slice(0, MAX_QUERIES - 1), queries.slice(MAX_QUERIES - 1).join('\n')];
}

/**
 * The facts related to a digest, in the order the list takes them: by the best unnormalised BM25 score any one
 * query gives them (a rare word shared with one message, "Cobalt", outweighs a common one shared with many, a
 * speaker's name), each query's first {@link MATCHES_PER_MESSAGE} matches only, so a message full of common words
 * adds few. `score` gives one query's unnormalised scores over the facts.
 */
export function relatedFacts(
  queries: readonly string[],
  score: (query: string) => readonly number[],
): number[] {
  const best = new Map<number, number>();
  for (const query of queries) {
    const matches: { position: number; score: number }[] = [];
    score(query).forEach((value, position) => {
      if (value > 0) matches.push({ position, score: value });
    });
    matches.sort((a, b) => b.score - a.score || a.position - b.position);
    for (const { position, score: value } of matches.slice(0, MATCHES_PER_MESSAGE))
      if (value > (best.get(position) ?? 0)) best.set(position, value);
  }
  return [...best].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([position]) => position);
}

export function lineTokens(entry: MemoryListEntry): number {
  return Math.ceil((renderMemoryListLine(entry).length + 1) / CHARS_PER_TOKEN);
}

export interface MemoryListOptions {
  /** Most tokens of memory list a call carries, stable part included (`limits.memoryTokensPerCall`). */
  readonly maxTokensPerCall: number;
  /** Calls the run will make. */
  readonly calls: number;
  /** Estimated tokens of the fixed instructions, which share the cached prefix. */
  readonly instructionTokens: number;
}

export interface MemoryList {
  /** The stable part, identical in every call of the run (empty when not worth caching). */
  readonly stable: readonly MemoryListEntry[];
  /** The rest of one call's list: earlier calls' facts, relevant ones and recent ones, within its budget. */
  select(digestText: string, digestTokens: number, runFacts: readonly MemoryListEntry[]): MemoryListEntry[];
}

/** `facts` in ranking order (as `rankFacts` gives them): the stable part is taken from the top. */
export function createMemoryList(facts: readonly MemoryListFact[], options: MemoryListOptions): MemoryList {
  const stableTarget = MIN_CACHED_PREFIX_TOKENS - options.instructionTokens;
  const totalTokens = facts.reduce((sum, fact) => sum + lineTokens(fact), 0);
  const stable: MemoryListFact[] = [];
  if (options.calls >= 2 && totalTokens > stableTarget && stableTarget < options.maxTokensPerCall) {
    let used = 0;
    for (const fact of facts) {
      if (used >= stableTarget) break;
      stable.push(fact);
      used += lineTokens(fact);
    }
  }
  const stableIds = new Set(stable.map((fact) => fact.id));
  const stableTokens = stable.reduce((sum, fact) => sum + lineTokens(fact), 0);
  const rest = facts.filter((fact) => !stableIds.has(fact.id));
  const search = createBm25Index(rest.map((fact) => fact.searchText));
  // Most recent first; ties by id so the same memory always gives the same list.
  const byRecency = rest
    .map((fact, position) => ({ fact, position }))
    .sort((a, b) =>
      a.fact.updated !== b.fact.updated
        ? a.fact.updated < b.fact.updated
          ? 1
          : -1
        : a.position - b.position,
    )
    .map((entry) => entry.fact);

  return {
    stable,
    select(digestText, digestTokens, runFacts) {
      const share = Math.ceil(MEMORY_FLOOR_TOKENS + MEMORY_SHARE_OF_DIGEST * digestTokens);
      const budget = Math.max(0, Math.min(options.maxTokensPerCall - stableTokens, share));
      const chosen: MemoryListEntry[] = [];
      const taken = new Set<string>();
      let used = 0;
      const take = (entry: MemoryListEntry, limit: number): boolean => {
        if (taken.has(entry.id) || stableIds.has(entry.id)) return true;
        const cost = lineTokens(entry);
        if (used + cost > limit) return false;
        chosen.push(entry);
        taken.add(entry.id);
        used += cost;
        return true;
      };
      // Newest of the run first: the facts a later session most likely updates again.
      for (const entry of [...runFacts].reverse()) if (!take(entry, budget)) break;
      const relevantLimit = used + Math.floor((budget - used) * (1 - RECENT_SHARE));
      if (rest.length > 0) {
        // A fact that does not fit is passed over, not the end: a shorter related one may still fit.
        for (const position of relatedFacts(digestQueries(digestText), (query) => search.rawScore(query)))
          take(rest[position] as MemoryListFact, relevantLimit);
      }
      for (const fact of byRecency) if (!take(fact, budget)) break;
      return chosen;
    },
  };
}
