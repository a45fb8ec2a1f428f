/**
 * The "current memory" list of each extraction call: which facts the model sees, so it can name the one a new
 * fact updates (`replaces`). Pure.
 *
 * Each call sees, inside a token budget counted against the call:
 * 1. the facts produced by earlier calls of the same run (an update later in one backlog must see them),
 * 2. the facts most relevant to this call's digest, by BM25 (the same ranking as recall) over title, hook and
 *    body, with the digest as the query,
 * 3. the most recently updated facts, for what the words of the digest do not name.
 * A third of the budget is kept for 3 so a digest full of common words cannot crowd out recent facts.
 *
 * When a run makes two calls or more and memory is large, a **stable part** (the top-ranked facts, the same
 * bytes in every call of the run) goes first, in the cached prefix with the instructions, sized so the prefix
 * passes the model's smallest cacheable prompt (4,096 tokens on Claude Haiku 4.5): later calls read it at a
 * tenth of the input price. A single call gains nothing from a cache write (it costs 1.25 × input), so it
 * gets no stable part; scheduled runs are hours apart, past any cache lifetime, so nothing is shared across runs.
 */
import { createBm25Index } from '../search/bm25.js';
import { CHARS_PER_TOKEN } from '../digest/estimate-tokens.js';
import { renderIndexLine, type IndexEntry } from './extraction.js';

/** A fact as the selector sees it: its index line, what it is searched by, and its date. */
export interface MemoryListFact extends IndexEntry {
  /** Title, hook and body: the text BM25 matches against the digest. */
  readonly searchText: string;
  /** YYYY-MM-DD the fact's text was last observed. */
  readonly updated: string;
}

/**
 * Smallest prefix, in estimated tokens, that the cached part must reach: Claude Haiku 4.5 (and Opus 4.5/4.6)
 * cache prompts of 4,096 tokens or more; 10 % more, because {@link CHARS_PER_TOKEN} is an estimate.
 */
export const MIN_CACHED_PREFIX_TOKENS = 4_500;

/** Share of a call's digest tokens its memory list may take (beside the stable part), plus a floor. */
export const MEMORY_SHARE_OF_DIGEST = 0.1;
export const MEMORY_FLOOR_TOKENS = 200;

export function lineTokens(entry: IndexEntry): number {
  return Math.ceil((renderIndexLine(entry).length + 1) / CHARS_PER_TOKEN);
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
  readonly stable: readonly IndexEntry[];
  /** The rest of one call's list: earlier calls' facts, relevant ones and recent ones, within its budget. */
  select(digestText: string, digestTokens: number, runFacts: readonly IndexEntry[]): IndexEntry[];
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
      const chosen: IndexEntry[] = [];
      const taken = new Set<string>();
      let used = 0;
      const take = (entry: IndexEntry, limit: number): boolean => {
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
      const relevantLimit = used + Math.floor((budget - used) * (2 / 3));
      if (rest.length > 0 && digestText.trim() !== '') {
        const scores = search.score(digestText);
        const relevant = rest
          .map((fact, position) => ({ fact, score: scores[position] ?? 0, position }))
          .filter((entry) => entry.score > 0)
          .sort((a, b) => b.score - a.score || a.position - b.position);
        for (const { fact } of relevant) if (!take(fact, relevantLimit)) break;
      }
      for (const fact of byRecency) if (!take(fact, budget)) break;
      return chosen;
    },
  };
}
