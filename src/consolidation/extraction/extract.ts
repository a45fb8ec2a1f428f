/**
 * Extract: one structured-output model call per batch. The model sees the fixed instructions, the current
 * memory chosen for that call (`memory-list.ts`: facts of earlier calls of the run, relevant ones, recent ones,
 * and, for runs of several calls, a stable part cached with the instructions), and the fenced digest; every
 * candidate it returns is tied to the sessions of its batch.
 *
 * Batches go in order until the call budget (`maxCalls`) is spent, up to `concurrency` at once: a batch
 * starts when no call in flight and no earlier queued batch holds one of its sessions, so the parts of a long
 * session go one after another (each sees the facts of the parts before it, and its progress is recorded as
 * a prefix) while different sessions go in parallel. An answer cut off at the output limit
 * (OutputLimitError) is never resent as is: the batch is split in two (`splitBatch`) and the halves go next,
 * in its place. What was not sent (budget spent, or a single line whose answer cannot fit) is reported per
 * session as the first message not sent, so the run consolidates what was sent and the rest waits.
 *
 * An answer is data from outside, read within limits (`limits.*`, see `answer-reader.ts`): an answer longer
 * than `maxAnswerChars`, refused on every attempt, or holding facts and none valid is dropped and the sessions
 * of its batch wait, like an unsent batch, with the reason; an answer with more facts than `maxFactsPerAnswer`
 * is asked again in halves, like one cut at the output limit; of an answer read, each fact is checked on its own
 * (schema, size) and one that fails is dropped and counted as an error of the run, the rest kept; a session past
 * `maxFactsPerSession` waits from that batch on. A session is never consolidated past a fact not read.
 */
import type { TokenUsage } from '../../model/types.js';
import type { FactDropReason, WaitReason } from '../../core/run.js';
import type { ExtractedFact } from './extraction.js';
import { runCalls } from './extract-queue.js';
import { createExtractionRun, type ExtractionRun, type ExtractOptions } from './extract-state.js';
import { batchedCallsOf, tallyNotes, type BatchedCalls, type CallRecord } from './extract-tally.js';
import type { Gathered } from '../gather/gather.js';
import { runFactId } from './replaces.js';
import { prepareUpdateCheck, type UpdateCheck } from './update-check.js';
import { factsPerUserLine, limitBinds } from './answer-yield.js';

export type { AnswerLimits } from './answer-reader.js';
export { anchorCandidate } from './extract-call.js';
export type { ExtractOptions } from './extract-state.js';
export type { BatchedCalls, CallRecord } from './extract-tally.js';
export {
  digestKey,
  extractionRequests,
  rankedMemoryList,
  runMemoryList,
  type ExtractionRequestOptions,
  type PreparedAnswer,
} from './extraction-request.js';
export { resolveRunReplaces, runFactId, type ShownToCall } from './replaces.js';
export { MEMORY_LIST_MAX_FACTS } from './tunables.js';

export interface Extracted {
  /**
   * The facts of the answers, in the order read: a fact's run id (`runFactId`) is its position. Their `replaces`
   * may still name each other (`resolveRunReplaces`) and the update check may add more.
   */
  readonly candidates: readonly ExtractedFact[];
  readonly calls: number;
  /** Model attempts beyond the first, summed over the calls (each retry is also logged). */
  readonly retries: number;
  readonly usage: TokenUsage;
  /** USD of the calls, priced call by call (a price tier can depend on one call's size); undefined: no price. */
  readonly costUsd: number | undefined;
  /** Tokens of each answered call, in the order the answers came. */
  readonly perCall: readonly CallRecord[];
  /** Per session, the first message of the first part not sent; absent: everything of it was sent. */
  readonly firstUnsent: ReadonlyMap<string, number>;
  /** What happened besides plain calls (splits after an output limit, lines that could not fit), for the run record. */
  readonly notes: readonly string[];
  /** Problems to report with the session's file (an answer that cannot fit even for one line). */
  readonly problems: readonly { readonly sessionId: string; readonly reason: string }[];
  /** Why each session of `firstUnsent` waits (the first reason it met). */
  readonly waiting: ReadonlyMap<string, { readonly reason: WaitReason; readonly detail: string }>;
  /** Facts of the answers dropped before reconcile, by reason. */
  readonly factsDropped: Readonly<Partial<Record<FactDropReason, number>>>;
  /** The share of the calls answered by a message batch (`prepared`); zero calls when none was. */
  readonly batched: BatchedCalls;
  /**
   * The update check of the candidates (`update-check.ts`), prepared, not asked: it goes with curation in the
   * reconcile step (`curate-run.ts`), which pays for it in a call curation makes anyway where it can.
   */
  readonly updateCheck: UpdateCheck;
  /** Answers thrown away unread and asked again in halves (too many facts, or cut at the output limit). */
  readonly answersAskedAgain: number;
  /** Batches split before they were sent, at the yield the run's answers showed (`answer-yield.ts`). */
  readonly splitBeforeSending: number;
  /** Facts per user line the run's answers carried (with the prior); undefined when no answer was read. */
  readonly factsPerUserLine: number | undefined;
}

/** Sends the gathered batches and reads their answers into the run's candidate facts (see the top of this file). */
export async function extractFacts(gathered: Gathered, options: ExtractOptions): Promise<Extracted> {
  const run = createExtractionRun(gathered, options);
  await runCalls(run);
  const notes = [...run.reader.notes(), ...tallyNotes(run.tally, options)];
  const { tally } = run;
  options.onProgress({ phase: 'extract', done: tally.calls, total: tally.calls });
  return {
    candidates: run.candidates,
    updateCheck: prepareRunCheck(run),
    answersAskedAgain: tally.splits.facts + tally.splits.output,
    splitBeforeSending: tally.splits.beforeSending,
    // Recorded (for history and status) only when batches were sized by it: a probing run's, or once the
    // answer limit bound; else there was nothing to size by.
    factsPerUserLine:
      run.answerYield.lines > 0 &&
      (run.probeFirst || limitBinds(run.answerYield, options.limits.maxFactsPerAnswer))
        ? factsPerUserLine(run.answerYield)
        : undefined,
    calls: tally.calls,
    retries: tally.retries,
    usage: tally.usage,
    costUsd: options.costOf === undefined ? undefined : tally.costUsd,
    firstUnsent: run.unsent.firstUnsent,
    perCall: tally.perCall,
    notes,
    problems: run.problems,
    waiting: run.unsent.waiting,
    factsDropped: run.reader.factsDropped,
    batched: batchedCallsOf(tally, options.costOf !== undefined),
  };
}

/**
 * The update check of the run's facts whose older version the extraction calls did not show (update-check.ts):
 * each fact was shown what its call's memory list listed and the other facts of its own answer.
 */
function prepareRunCheck(run: ExtractionRun): UpdateCheck {
  const { options, shown } = run;
  const byCall = new Map<number, string[]>();
  shown.forEach((entry, position) => {
    const ids = byCall.get(entry.call) ?? [];
    ids.push(runFactId(position));
    byCall.set(entry.call, ids);
  });
  return prepareUpdateCheck(run.candidates, {
    index: options.index,
    runId: runFactId,
    shown: run.listedTo.map(
      (listed, position) => new Set([...listed, ...(byCall.get(shown[position]?.call ?? -1) ?? [])]),
    ),
  });
}
