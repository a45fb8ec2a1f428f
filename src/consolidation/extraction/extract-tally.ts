/**
 * What an extraction's calls cost and came to: calls, retries, tokens and dollars (priced call by call, the
 * message batch's answers at the batch price), and the answers it split or dropped, for the run record.
 */
import { emptyUsage, type TokenUsage } from '../../model/types.js';
import { addCost, countUsage } from '../../model/call-tally.js';
import type { AnswerLimits } from './answer-reader.js';

/** USD of one call's usage (`batched`: at the batch price); undefined when the model has no known price. */
export type CostOf = (usage: TokenUsage, batched?: boolean) => number | undefined;

/** One answered extraction call's tokens, for the run record and the benchmark. */
export interface CallRecord {
  readonly inputTokens: number;
  /** Output tokens, thinking included: what the effort setting changes. */
  readonly outputTokens: number;
  /** The answer came from a message batch (billed at the batch price). */
  readonly batched?: boolean;
}

/** What a run's answers from a message batch came to: calls, and dollars at the batch price and at list. */
export interface BatchedCalls {
  readonly calls: number;
  readonly usage: TokenUsage;
  readonly costUsd: number | undefined;
  readonly listCostUsd: number | undefined;
}

/** The running account of one extraction, updated as its answers come. */
export interface ExtractionTally {
  /** Calls started (the number of the last one), then the update check's calls too. */
  calls: number;
  retries: number;
  usage: TokenUsage;
  /** USD so far; undefined once a call had no price. */
  costUsd: number | undefined;
  readonly perCall: CallRecord[];
  batched: { calls: number; usage: TokenUsage; costUsd: number | undefined; listCostUsd: number | undefined };
  /** Answers dropped unread (refused, too large): their sessions wait. */
  droppedAnswers: number;
  /** Answers that held facts and none valid: their sessions wait. */
  invalidAnswers: number;
  /**
   * Batches asked again in halves, after an output limit or too many facts (their answers thrown away), and
   * batches split before they were sent, at the yield the run's answers showed.
   */
  readonly splits: { output: number; facts: number; beforeSending: number };
}

/** An extraction's account before its first call. */
export function createTally(): ExtractionTally {
  return {
    calls: 0,
    retries: 0,
    usage: emptyUsage(),
    costUsd: 0,
    perCall: [],
    batched: { calls: 0, usage: emptyUsage(), costUsd: 0, listCostUsd: 0 },
    droppedAnswers: 0,
    invalidAnswers: 0,
    splits: { output: 0, facts: 0, beforeSending: 0 },
  };
}

/** Adds a batch answer's billed usage, at the batch price and at list. */
export function countBatched(
  tally: ExtractionTally,
  answerUsage: TokenUsage,
  costOf: CostOf | undefined,
): void {
  const batchCost = costOf?.(answerUsage, true);
  const listCost = costOf?.(answerUsage, false);
  const batched = tally.batched;
  batched.calls += 1;
  countUsage(batched, answerUsage, batchCost);
  batched.listCostUsd = addCost(batched.listCostUsd, listCost);
  countUsage(tally, answerUsage, batchCost);
}

/** Adds an answer, paid for whether or not it is read; a batch answer's usage was added when it was taken. */
export function countAnswer(
  tally: ExtractionTally,
  answer: { readonly usage: TokenUsage; readonly attempts: number; readonly batched: boolean },
  costOf: CostOf | undefined,
): void {
  tally.retries += answer.attempts - 1;
  tally.perCall.push({
    outputTokens: answer.usage.outputTokens,
    inputTokens: answer.usage.inputTokens,
    ...(answer.batched ? { batched: true } : {}),
  });
  if (!answer.batched) {
    countUsage(tally, answer.usage, costOf?.(answer.usage));
  }
}

/** The batched share of the calls, its dollars unknown when the model has no price. */
export function batchedCallsOf(tally: ExtractionTally, priced: boolean): BatchedCalls {
  return priced ? { ...tally.batched } : { ...tally.batched, costUsd: undefined, listCostUsd: undefined };
}

/** The run record's notes on answers split or dropped, with the setting that caused each. */
export function tallyNotes(
  tally: ExtractionTally,
  options: { readonly maxOutputTokens: number; readonly limits: AnswerLimits },
): string[] {
  const notes: string[] = [];
  if (tally.droppedAnswers > 0) {
    notes.push(
      `${tally.droppedAnswers} answer(s) were dropped (refused or too large); their sessions wait for the next run`,
    );
  }
  if (tally.splits.output > 0) {
    notes.push(
      `${tally.splits.output} answer(s) stopped at the output limit (${options.maxOutputTokens} tokens); each batch was split in two and sent again as halves, never as the same request`,
    );
  }
  if (tally.splits.facts > 0) {
    notes.push(
      `${tally.splits.facts} answer(s) held more facts than limits.maxFactsPerAnswer (${options.limits.maxFactsPerAnswer}) or limits.maxFactsPerSession (${options.limits.maxFactsPerSession}) allow; each batch was split in two and asked again, so no fact was cut`,
    );
  }
  if (tally.invalidAnswers > 0) {
    notes.push(
      `${tally.invalidAnswers} answer(s) held facts and none valid; their sessions wait for the next run`,
    );
  }
  return notes;
}
