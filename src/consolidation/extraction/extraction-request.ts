/**
 * The extraction request of a batch, the same whether it is sent as a call or in a message batch: the
 * instructions, the memory list chosen for its digest (the run's facts of earlier answers included), and the
 * fenced digest. A batch's digest key matches a message batch's answer to the batch it was asked for.
 */
import { createHash } from 'node:crypto';
import type { Batch } from '../../digest/index.js';
import { estimateTokens } from '../../digest/estimate-tokens.js';
import type { Fact } from '../../memory/types.js';
import { hookOf, rankFacts } from '../../memory/index.js';
import type { BatchItemResult, GenerateObjectRequest } from '../../model/types.js';
import type { AnswerLimits } from './answer-reader.js';
import {
  buildExtractionParts,
  EXTRACTION_INSTRUCTIONS,
  EXTRACTION_SCHEMA_NAME,
  ExtractionAnswer,
  ExtractionOutput,
  type MemoryListEntry,
} from './extraction.js';
import { createMemoryList, type MemoryListFact } from './memory-list.js';
import { isRunFactId } from './replaces.js';
import { MEMORY_LIST_MAX_FACTS } from './tunables.js';

/** An answer of a message batch, for the batch of the run whose digest it carries (see {@link digestKey}). */
export type PreparedAnswer = BatchItemResult<ExtractionAnswer>;

/** The key of a batch's digest: the same session messages give the same key in the run that collects. */
export function digestKey(batch: Pick<Batch, 'text'>): string {
  return createHash('sha256').update(batch.text).digest('hex');
}

/** The facts a call's memory list is chosen from: the top-ranked active facts, as `MEMORY.md` ranks them. */
export function rankedMemoryList(facts: readonly Fact[], now: Date): MemoryListFact[] {
  return rankFacts(
    facts.filter((fact) => fact.status === 'active'),
    now,
  )
    .slice(0, MEMORY_LIST_MAX_FACTS)
    .map((fact) => {
      const hook = hookOf(fact);
      return {
        id: fact.id,
        type: fact.type,
        title: fact.title,
        hook,
        searchText: `${fact.title}\n${hook}\n${fact.body}`,
        updated: fact.updated,
      };
    });
}

/** The options a run's extraction requests are built from. */
export interface ExtractionRequestOptions {
  readonly today: string;
  readonly maxOutputTokens: number;
  readonly limits: Pick<AnswerLimits, 'maxAnswerChars'>;
  readonly known?: readonly string[] | undefined;
}

/** The request of one batch, the run's facts it shows (`seen`) and every id its memory list shows (`listed`). */
export interface BatchRequest {
  readonly request: GenerateObjectRequest<ExtractionAnswer>;
  readonly seen: Set<string>;
  readonly listed: Set<string>;
}

/**
 * The memory list a run's calls choose from: one per run, sized for its number of batches (the stable part,
 * cached with the instructions, only when there are several).
 */
export function runMemoryList(
  index: readonly MemoryListFact[],
  memoryTokensPerCall: number,
  batches: number,
): ReturnType<typeof createMemoryList> {
  return createMemoryList(index, {
    maxTokensPerCall: memoryTokensPerCall,
    calls: batches,
    instructionTokens: estimateTokens(EXTRACTION_INSTRUCTIONS),
  });
}

/**
 * Builds the extraction request of a batch: the instructions, the memory list chosen for its digest (with the
 * run's facts of earlier answers, `runEntries`), and the fenced digest; `seen` is which of the run's facts it
 * shows. The message batch's requests are built here too, so a batched call asks what a synchronous one would.
 */
export function extractionRequests(
  memoryList: ReturnType<typeof createMemoryList>,
  options: ExtractionRequestOptions,
): (batch: Batch, runEntries: readonly MemoryListEntry[], signal?: AbortSignal) => BatchRequest {
  return (batch, runEntries, signal) => {
    const listed = memoryList.select(batch.text, batch.estimatedTokens, runEntries);
    const seen = new Set(listed.map((entry) => entry.id).filter(isRunFactId));
    const shownIds = new Set([...memoryList.stable, ...listed].map((entry) => entry.id));
    const parts = buildExtractionParts({
      stable: memoryList.stable,
      index: listed,
      digestText: batch.text,
      today: options.today,
      known: options.known,
    });
    return {
      seen,
      listed: shownIds,
      request: {
        system: EXTRACTION_INSTRUCTIONS,
        prompt: parts.prompt,
        promptPrefix: parts.prefix,
        schema: ExtractionAnswer,
        wireSchema: ExtractionOutput,
        schemaName: EXTRACTION_SCHEMA_NAME,
        maxAnswerChars: options.limits.maxAnswerChars,
        maxOutputTokens: options.maxOutputTokens,
        ...(signal === undefined ? {} : { signal }),
      },
    };
  };
}
