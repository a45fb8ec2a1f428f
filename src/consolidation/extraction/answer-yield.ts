/**
 * How many facts a user line yields, learned as a run's answers come: batches are planned at half a fact per
 * user line; a large first batch goes alone as a probe (`extract-queue.ts`), cut to what a dense dialogue's
 * answer fits, and once an answer
 * came near `limits.maxFactsPerAnswer`, each batch about to be sent is checked against what this run's
 * answers have carried, so one that would pass the limit is split before it is sent, not asked, paid for,
 * thrown away and asked again in halves. (A yield kept from a space's last run is not planned by: a run of other
 * sessions, or a backlog's first pass, yields otherwise, and a high guess cuts every call small.) A dense dialogue (a
 * register read out plot by plot, a mentor's list of coding rules) yields a fact or more per line; an agent's
 * transcript far fewer.
 */
import { FACTS_PER_USER_LINE, USER_LINE, type Batch, type BatchSegment } from '../../digest/index.js';
import { YIELD_MARGIN, PRIOR_LINES, BINDING_SHARE, PROBE_FACTS_PER_USER_LINE } from './tunables.js';

/** Facts and user lines of the answers read so far, and the yield assumed before them. */
export interface AnswerYield {
  facts: number;
  lines: number;
  /** Most facts one answer held (or claimed, when refused for holding too many). */
  largest: number;
  readonly prior: number;
}

export function createAnswerYield(prior: number = FACTS_PER_USER_LINE): AnswerYield {
  return { facts: 0, lines: 0, largest: 0, prior };
}

/** Whether an answer of this run came near the answer limit (see {@link BINDING_SHARE}). */
export function limitBinds(answerYield: AnswerYield, limit: number): boolean {
  return answerYield.largest >= BINDING_SHARE * limit;
}

/** The user lines a batch carries. */
export function userLinesOf(batch: Batch): number {
  let lines = 0;
  for (const segment of batch.segments) lines += segmentUserLines(segment);
  return lines;
}

/** The user lines one segment (a session, or part of one) carries. */
export function segmentUserLines(segment: BatchSegment): number {
  let lines = 0;
  for (const line of segment.lines) if (USER_LINE.test(line.text)) lines += 1;
  return lines;
}

/** Counts an answer's facts (read, or counted before it was refused for holding too many) for its batch. */
export function observeAnswer(answerYield: AnswerYield, batch: Batch, facts: number): void {
  answerYield.facts += facts;
  answerYield.lines += userLinesOf(batch);
  answerYield.largest = Math.max(answerYield.largest, facts);
}

/** Facts per user line: the answers' mean, weighted with the prior until enough lines were read. */
export function factsPerUserLine(answerYield: AnswerYield): number {
  return (answerYield.facts + answerYield.prior * PRIOR_LINES) / (answerYield.lines + PRIOR_LINES);
}

/** Whether a probe's answer could pass `limit` facts in a dense dialogue (see {@link PROBE_FACTS_PER_USER_LINE}). */
export function probeOverLimit(batch: Batch, limit: number): boolean {
  return userLinesOf(batch) * PROBE_FACTS_PER_USER_LINE * YIELD_MARGIN > limit;
}

/** Whether a batch's answer is expected to pass `limit` facts at the yield seen so far (with a margin). */
export function expectedOverLimit(answerYield: AnswerYield, batch: Batch, limit: number): boolean {
  return userLinesOf(batch) * factsPerUserLine(answerYield) * YIELD_MARGIN > limit;
}
