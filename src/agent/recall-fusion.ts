/**
 * Fused recall: the fact ranking (recall's rules, untouched) and a BM25 ranking of transcript passages, merged
 * by reciprocal rank fusion, so a question whose answer was never made a fact still finds its session. Pure:
 * the passages are read by `transcript-passages.ts`.
 *
 * Why rank fusion and not a score merge: a fact's score is BM25F over a few fielded lines, a passage's is
 * BM25 over one message of a chat; the two scales do not compare, their orders do. Reciprocal rank fusion
 * (1 / (k + rank) summed over the lists, Cormack et al. 2009) needs no calibration.
 */
import { createBm25Index, type PlainBm25Index } from '../search/bm25.js';
import { inDayRanges, splitQueryDates } from '../search/query-dates.js';
import type { TranscriptPassage, TranscriptPassages } from './transcript-passages.js';

/**
 * k of reciprocal rank fusion: 60, the value of its paper, under which a first and a tenth rank differ by
 * 13 %: the lists interleave, neither buries the other.
 */
export const FUSION_K = 60;
/**
 * Places a passage ranks behind a fact of the same rank: the facts are the curated memory, a passage the
 * fallback for what no fact holds, so the first three facts come before the first passage and the lists
 * interleave after. Chosen on the generated long set (docs/eval.md): with 0 (plain fusion) facts that
 * answered at ranks 6 to 10 fell out (multilingual 96 % to 52 % at 10), with 3 they stay (96 %) and every
 * question only a transcript answers is still found in the top 10 (37 of 37).
 */
export const PASSAGE_RANK_OFFSET = 3;
/** Added to a passage's score when it was said on a day the query names, as for facts (`QUERY_DATE_BONUS`). */
const PASSAGE_DATE_BONUS = 0.15;

/** What a result is: a fact that holds now, a fact a newer one replaced, an agent's note, a transcript passage. */
export type RecallKind = 'fact' | 'archived' | 'note' | 'passage';

/** One ranked item as fusion sees it. */
export interface Ranked {
  readonly id: string;
  readonly date: string;
  readonly title: string;
}

/** One passage found, with its normalised BM25 score (0..1). */
export interface PassageHit {
  readonly passage: TranscriptPassage;
  readonly score: number;
}

const indexes = new WeakMap<TranscriptPassages, PlainBm25Index>();
const bySession = new WeakMap<TranscriptPassages, Map<string, TranscriptPassage[]>>();

/** A passage's key: its session and message. */
export function passageKey(passage: Pick<TranscriptPassage, 'sessionId' | 'message'>): string {
  return `${passage.sessionId}#${passage.message}`;
}

/**
 * The messages the facts were made from: for each fact, of the passages of its source sessions, the one that
 * shares most words with the fact's title and text (a fact keeps its sessions' ids, not the message, as
 * `withPassages` in recall.ts finds it). Such a passage says again what the fact says: fusion leaves it out,
 * so a slot goes to something the facts do not hold.
 */
export function passagesSaidAsFacts(
  passages: TranscriptPassages,
  facts: readonly { readonly title: string; readonly text: string; readonly sources?: readonly string[] }[],
): Set<string> {
  let sessions = bySession.get(passages);
  if (sessions === undefined) {
    sessions = new Map();
    for (const passage of passages.passages) {
      const list = sessions.get(passage.sessionId) ?? [];
      list.push(passage);
      sessions.set(passage.sessionId, list);
    }
    bySession.set(passages, sessions);
  }
  const said = new Set<string>();
  for (const fact of facts) {
    const candidates = (fact.sources ?? []).flatMap((source) => sessions.get(source) ?? []);
    if (candidates.length === 0) continue;
    const scores = createBm25Index(candidates.map((passage) => passage.text)).score(
      `${fact.title}\n${fact.text}`,
    );
    let best = -1;
    scores.forEach((score, i) => {
      if (score > 0 && (best === -1 || score > scores[best]!)) best = i;
    });
    if (best !== -1) said.add(passageKey(candidates[best]!));
  }
  return said;
}

/** The BM25 index over an index's passages, built once per index read. */
function indexOf(passages: TranscriptPassages): PlainBm25Index {
  let index = indexes.get(passages);
  if (index === undefined) {
    index = createBm25Index(passages.passages.map((passage) => passage.text));
    indexes.set(passages, index);
  }
  return index;
}

/**
 * The passages that best match a query, best first: BM25 over each message's text, the query's dates read as
 * recall reads them (a passage of a day the query names is lifted), results under `relativeMinScore` of the
 * best dropped, ties by recency.
 */
export function searchPassages(
  passages: TranscriptPassages,
  query: string,
  options: {
    readonly limit: number;
    readonly relativeMinScore: number;
    readonly now: Date;
    /** Passages left out (`passagesSaidAsFacts`). */
    readonly except?: ReadonlySet<string>;
  },
): PassageHit[] {
  if (passages.passages.length === 0 || options.limit <= 0) return [];
  const { ranges, words } = splitQueryDates(query, options.now);
  const scores = indexOf(passages).score(words);
  const list = passages.passages;
  let best = 0;
  const lifted = scores.map((score, i) => {
    const lift =
      score > 0 && inDayRanges(ranges, list[i]!.date, '') ? Math.min(1, score + PASSAGE_DATE_BONUS) : score;
    best = Math.max(best, lift);
    return lift;
  });
  const hits: PassageHit[] = [];
  lifted.forEach((score, i) => {
    const passage = list[i]!;
    if (
      score > 0 &&
      score >= options.relativeMinScore * best &&
      options.except?.has(passageKey(passage)) !== true
    )
      hits.push({ passage, score });
  });
  return hits
    .sort(
      (a, b) =>
        b.score - a.score ||
        b.passage.date.localeCompare(a.passage.date) ||
        a.passage.sessionId.localeCompare(b.passage.sessionId) ||
        a.passage.message - b.passage.message,
    )
    .slice(0, options.limit);
}

/**
 * Reciprocal rank fusion of the fact ranking and the passage ranking, best first, at most `limit`: a fact
 * scores `1 / (FUSION_K + rank)` (rank from 1), a passage `1 / (FUSION_K + PASSAGE_RANK_OFFSET + rank)`; at
 * equal score the fact comes first, then the newer.
 */
export function fuseRankings<Fact extends Ranked, Passage extends Ranked>(
  facts: readonly Fact[],
  passages: readonly Passage[],
  limit: number,
): (Fact | Passage)[] {
  const scored = [
    ...facts.map((item, rank) => ({ item, fused: 1 / (FUSION_K + rank + 1), fact: 0 })),
    ...passages.map((item, rank) => ({
      item,
      fused: 1 / (FUSION_K + PASSAGE_RANK_OFFSET + rank + 1),
      fact: 1,
    })),
  ];
  return scored
    .sort(
      (a, b) =>
        b.fused - a.fused ||
        a.fact - b.fact ||
        b.item.date.localeCompare(a.item.date) ||
        a.item.id.localeCompare(b.item.id),
    )
    .slice(0, Math.max(0, limit))
    .map((entry) => entry.item);
}
