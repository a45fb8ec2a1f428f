/**
 * Extract: one structured-output model call per batch. The model sees the fixed instructions (cached), the
 * current index, and the fenced digest; every candidate it returns is tied to the sessions of its batch.
 */
import type { Fact } from '../memory/types.js';
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
  /** USD of the calls, priced call by call (a price tier can depend on one call's size); undefined: no price. */
  readonly costUsd: number | undefined;
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
    /** USD of one call's usage; undefined when the model has no known price. */
    costOf?: ((usage: TokenUsage) => number | undefined) | undefined;
    signal?: AbortSignal | undefined;
    onProgress: (progress: RunProgress) => void;
  },
): Promise<Extracted> {
  const candidates: ExtractedFact[] = [];
  let usage = emptyUsage();
  let calls = 0;
  let costUsd: number | undefined = 0;
  const total = gathered.batches.length;
  for (const { batch, sessionIds } of gathered.batches) {
    options.onProgress({ phase: 'extract', done: calls, total });
    const result = await options.model().generateObject({
      system: EXTRACTION_INSTRUCTIONS,
      prompt: buildExtractionPrompt({ index: options.index, digestText: batch.text, today: options.today }),
      schema: ExtractionOutput,
      schemaName: EXTRACTION_SCHEMA_NAME,
      maxOutputTokens: options.maxOutputTokens,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    calls += 1;
    usage = addUsage(usage, result.usage);
    const callCost = options.costOf?.(result.usage);
    costUsd = costUsd === undefined || callCost === undefined ? undefined : costUsd + callCost;
    for (const candidate of result.value.facts) {
      candidates.push(anchorCandidate(candidate, sessionIds, gathered.sessionDates));
    }
  }
  options.onProgress({ phase: 'extract', done: calls, total });
  return { candidates, calls, usage, costUsd: options.costOf === undefined ? undefined : costUsd };
}
