/**
 * Extract: one structured-output model call per batch. The model sees the fixed instructions (cached), the
 * current index, and the fenced digest; every candidate it returns is tied to the sessions of its batch.
 *
 * Batches go in order until the call budget (`maxCalls`) is spent. An answer cut off at the output limit
 * (OutputLimitError) is never resent as is: the batch is split in two (`splitBatch`) and the halves go next,
 * in its place. What was not sent (budget spent, or a single line whose answer cannot fit) is reported per
 * session as the first message not sent, so the run consolidates what was sent and the rest waits.
 */
import { splitBatch, type Batch } from '../digest/index.js';
import type { Fact } from '../memory/types.js';
import { OutputLimitError } from '../model/index.js';
import { hookOf, rankFacts } from '../memory/index.js';
import { addUsage, emptyUsage, type ModelProvider, type TokenUsage } from '../model/types.js';
import {
  buildExtractionPrompt,
  EXTRACTION_INSTRUCTIONS,
  EXTRACTION_SCHEMA_NAME,
  ExtractionOutput,
  type ExtractedFact,
  type IndexEntry,
} from './extraction.js';
import type { Gathered } from './gather.js';
import type { RunProgress } from './types.js';

/** Active facts the model sees as the current index, so it can say which one a new fact replaces. */
export const PROMPT_INDEX_FACTS = 200;

export interface Extracted {
  readonly candidates: readonly ExtractedFact[];
  readonly calls: number;
  readonly usage: TokenUsage;
  /** Per session, the first message of the first part not sent; absent: everything of it was sent. */
  readonly firstUnsent: ReadonlyMap<string, number>;
  /** What happened besides plain calls (splits after an output limit, lines that could not fit), for the run record. */
  readonly notes: readonly string[];
  /** Problems to report with the session's file (an answer that cannot fit even for one line). */
  readonly problems: readonly { readonly sessionId: string; readonly reason: string }[];
}

/** First message of each session in a batch that was not sent, merged into `firstUnsent` (lowest wins). */
function markUnsent(batch: Batch, firstUnsent: Map<string, number>): void {
  for (const segment of batch.segments) {
    const first = segment.lines[0]?.message;
    if (first === undefined) continue;
    const known = firstUnsent.get(segment.sessionId);
    if (known === undefined || first < known) firstUnsent.set(segment.sessionId, first);
  }
}

/** Candidates are tied to the sessions of their batch: unknown source ids are dropped, none means all. */
export function anchorCandidate(
  candidate: ExtractedFact,
  batchSessions: readonly string[],
  dates: ReadonlyMap<string, string>,
): ExtractedFact {
  const known = candidate.sources.filter((source) => batchSessions.includes(source));
  const sources = known.length > 0 ? known : [...batchSessions];
  const observed = /^\d{4}-\d{2}-\d{2}$/.test(candidate.observed)
    ? candidate.observed
    : (sources
        .map((source) => dates.get(source) ?? '')
        .sort()
        .at(-1) ?? candidate.observed);
  return { ...candidate, sources, observed };
}

/** The index lines the model sees: the top-ranked active facts, as `MEMORY.md` ranks them. */
export function promptIndex(facts: readonly Fact[], now: Date): IndexEntry[] {
  return rankFacts(
    facts.filter((fact) => fact.status === 'active'),
    now,
  )
    .slice(0, PROMPT_INDEX_FACTS)
    .map((fact) => ({ id: fact.id, type: fact.type, title: fact.title, hook: hookOf(fact) }));
}

export async function extractFacts(
  gathered: Gathered,
  options: {
    model: () => ModelProvider;
    index: readonly IndexEntry[];
    today: string;
    maxOutputTokens: number;
    /** Most calls this run may make (`limits.maxCallsPerRun`). Default: no limit. */
    maxCalls?: number;
    signal?: AbortSignal | undefined;
    onProgress: (progress: RunProgress) => void;
  },
): Promise<Extracted> {
  const candidates: ExtractedFact[] = [];
  const firstUnsent = new Map<string, number>();
  const notes: string[] = [];
  const problems: { sessionId: string; reason: string }[] = [];
  const maxCalls = options.maxCalls ?? Number.POSITIVE_INFINITY;
  let usage = emptyUsage();
  let calls = 0;
  let splits = 0;
  const queue: Batch[] = gathered.batches.map((entry) => entry.batch);
  // A session that lost a part stops here: its later parts wait too, so the ledger's progress is a prefix.
  const blocked = (batch: Batch): boolean =>
    batch.segments.some((segment) => {
      const stop = firstUnsent.get(segment.sessionId);
      return stop !== undefined && (segment.lines[0]?.message ?? Number.POSITIVE_INFINITY) >= stop;
    });
  while (queue.length > 0) {
    const batch = queue.shift() as Batch;
    if (calls >= maxCalls || blocked(batch)) {
      markUnsent(batch, firstUnsent);
      continue;
    }
    options.onProgress({ phase: 'extract', done: calls, total: calls + queue.length + 1 });
    calls += 1;
    let result;
    try {
      result = await options.model().generateObject({
        system: EXTRACTION_INSTRUCTIONS,
        prompt: buildExtractionPrompt({ index: options.index, digestText: batch.text, today: options.today }),
        schema: ExtractionOutput,
        schemaName: EXTRACTION_SCHEMA_NAME,
        maxOutputTokens: options.maxOutputTokens,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof OutputLimitError)) throw error;
      const halves = splitBatch(batch);
      if (halves === undefined) {
        markUnsent(batch, firstUnsent);
        for (const sessionId of batch.sessionIds) {
          problems.push({
            sessionId,
            reason: `the answer for one message passes the output limit of ${options.maxOutputTokens} tokens; raise model.maxOutputTokens (the session waits at that message)`,
          });
        }
        continue;
      }
      splits += 1;
      queue.unshift(...halves);
      continue;
    }
    usage = addUsage(usage, result.usage);
    for (const candidate of result.value.facts) {
      candidates.push(anchorCandidate(candidate, batch.sessionIds, gathered.sessionDates));
    }
  }
  if (splits > 0) {
    notes.push(
      `${splits} answer(s) stopped at the output limit (${options.maxOutputTokens} tokens); each batch was split in two and sent again as halves, never as the same request`,
    );
  }
  options.onProgress({ phase: 'extract', done: calls, total: calls });
  return { candidates, calls, usage, firstUnsent, notes, problems };
}
