/**
 * How many facts a user line yields, learned as a run's answers come: a batch is planned at the space's last
 * yield (or half a fact per user line for a space's first run), and each batch about to be sent is checked
 * against what this run's answers have carried so far, so one that would pass `limits.maxFactsPerAnswer` is
 * split before it is sent, not asked, paid for, thrown away and asked again in halves. A dense dialogue (a
 * register read out plot by plot, a mentor's list of coding rules) yields a fact or more per line; an agent's
 * transcript far fewer.
 */
import { FACTS_PER_USER_LINE, USER_LINE, type Batch } from '../digest/index.js';

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
  readonly prior: number;
}

export function createAnswerYield(prior: number = FACTS_PER_USER_LINE): AnswerYield {
  return { facts: 0, lines: 0, prior };
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
}

/** Facts per user line: the answers' mean, weighted with the prior until enough lines were read. */
export function factsPerUserLine(answerYield: AnswerYield): number {
  return (answerYield.facts + answerYield.prior * PRIOR_LINES) / (answerYield.lines + PRIOR_LINES);
}

/** Whether a batch's answer is expected to pass `limit` facts at the yield seen so far (with a margin). */
export function expectedOverLimit(answerYield: AnswerYield, batch: Batch, limit: number): boolean {
  return userLinesOf(batch) * factsPerUserLine(answerYield) * YIELD_MARGIN > limit;
}

/**
 * The facts-per-call budget to plan batches with at a yield of `perLine` facts per user line: the planner
 * counts {@link FACTS_PER_USER_LINE} a line, so its budget is scaled by how much more (or less) a line yields.
 */
export function plannedFactsPerCall(limit: number, perLine: number): number {
  return Math.max(1, Math.floor((limit * FACTS_PER_USER_LINE) / (Math.max(perLine, 0.01) * YIELD_MARGIN)));
}
