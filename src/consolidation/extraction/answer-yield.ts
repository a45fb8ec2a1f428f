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
import { FACTS_PER_USER_LINE, USER_LINE, type Batch } from '../../digest/index.js';

/**
 * Expected facts are multiplied by this before they are held against the answer limit: a batch's lines yield
 * about the run's mean, and some more.
 */
export const YIELD_MARGIN = 1.25;
/** Weight of the prior yield, in user lines: small, so the first answers set it (a lagging yield throws answers away). */
const PRIOR_LINES = 2;

/** Facts and user lines of the answers read so far, and the yield assumed before them. */
export interface AnswerYield {
  facts: number;
  lines: number;
  /** Most facts one answer held (or claimed, when refused for holding too many). */
  largest: number;
  readonly prior: number;
}

/**
 * Share of `limits.maxFactsPerAnswer` an answer must reach for the limit to bind: below it, answers are far
 * from the limit and batches are left as planned, however many facts a user line yields (an agent's facts come
 * from tool output as much as from the user's few lines).
 */
export const BINDING_SHARE = 0.8;

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
  for (const segment of batch.segments)
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

/**
 * Facts per user line a probe is sized for: a dense dialogue's (a register read out plot by plot, a mentor's
 * list of rules), so the probe's own answer stays under the limit however dense the run turns out to be. A
 * sparser run pays one call more for it than the planned batch; a denser one saves the answer thrown away.
 */
export const PROBE_FACTS_PER_USER_LINE = 1;

/**
 * Batches a run must plan for its probe to be cut: the cut costs one call more, at most a third more in a
 * backlog of three batches or more, where learning a dense yield first saves an answer thrown away (its whole
 * output, at five times the input's price) and the halves asked again; a run of two batches sends its probe
 * as planned (a sparse dialogue would pay half as many calls again for the cut, a dense one one answer).
 */
export const PROBE_CUT_MIN_BATCHES = 3;

/** Whether a probe's answer could pass `limit` facts in a dense dialogue (see {@link PROBE_FACTS_PER_USER_LINE}). */
export function probeOverLimit(batch: Batch, limit: number): boolean {
  return userLinesOf(batch) * PROBE_FACTS_PER_USER_LINE * YIELD_MARGIN > limit;
}

/** Whether a batch's answer is expected to pass `limit` facts at the yield seen so far (with a margin). */
export function expectedOverLimit(answerYield: AnswerYield, batch: Batch, limit: number): boolean {
  return userLinesOf(batch) * factsPerUserLine(answerYield) * YIELD_MARGIN > limit;
}
