/**
 * The order of an extraction's calls: batches go in order until the call budget is spent, up to
 * `concurrency` at once; a batch starts when no call in flight and no earlier queued batch holds one of its
 * sessions, so the parts of a long session go one after another while different sessions go in parallel.
 * One failure that is not an answer's (auth, the budget's abort …) ends the extraction: the calls in flight
 * stop, and it is thrown once they have.
 */
import { splitBatch, type Batch } from '../../digest/index.js';
import { expectedOverLimit, limitBinds, probeOverLimit, segmentUserLines } from './answer-yield.js';
import { PROBE_CUT_MIN_BATCHES, PROBE_FACTS_PER_USER_LINE, YIELD_MARGIN } from './tunables.js';
import { runCall } from './extract-call.js';
import type { ExtractionRun } from './extract-state.js';
import { blockedByUnsent, markUnsent } from './unsent-sessions.js';

/** The calls in flight, how many have finished, and the first failure that ends the extraction. */
interface CallsInFlight {
  readonly inFlight: Map<Batch, Promise<void>>;
  finished: number;
  failure: { error: unknown } | undefined;
}

/**
 * The first queued batch that may start now: none of its sessions is in flight or in an earlier queued
 * batch (a session's parts go in order, each seeing the facts of the one before).
 */
function nextReady(queue: readonly Batch[], inFlight: ReadonlyMap<Batch, unknown>): number {
  const busy = new Set([...inFlight.keys()].flatMap((running) => running.sessionIds));
  for (let position = 0; position < queue.length; position++) {
    const batch = queue[position] as Batch;
    if (batch.sessionIds.every((sessionId) => !busy.has(sessionId))) return position;
    for (const sessionId of batch.sessionIds) busy.add(sessionId);
  }
  return -1;
}

/**
 * The position of the batch to start now, or -1 to wait for a call in flight. The first call goes alone with
 * a cached prefix (the stable part of the memory list): calls sent together before it is written would each
 * pay a cache write instead of reading it; and a probe (see {@link probes}): calls sent together before its
 * answer shows the yield of facts per line would all be sized at a guess.
 */
function nextToStart(run: ExtractionRun, calls: CallsInFlight): number {
  const firstAlone = run.memoryList.stable.length > 0 || probes(run);
  const warming = firstAlone && calls.finished === 0 && calls.inFlight.size > 0;
  const concurrency = Math.max(1, run.options.concurrency ?? 1);
  return calls.inFlight.size < concurrency && !warming ? nextReady(run.queue, calls.inFlight) : -1;
}

/** Starts the call of a batch, or leaves its sessions waiting when the budget is spent or an earlier part was not sent. */
function startOrDefer(run: ExtractionRun, calls: CallsInFlight, batch: Batch): void {
  const { tally } = run;
  if (tally.calls >= run.maxCalls || blockedByUnsent(batch, run.unsent.firstUnsent)) {
    markUnsent(
      batch,
      run.unsent,
      'call-budget',
      `the run made its limits.maxCallsPerRun (${run.maxCalls}) calls; the session continues in the next run`,
    );
    return;
  }
  run.options.onProgress({
    phase: 'extract',
    done: calls.finished,
    total: tally.calls + run.queue.length + 1,
  });
  tally.calls += 1;
  const call = runCall(run, batch, tally.calls)
    .catch((error: unknown) => {
      if (calls.failure === undefined) calls.failure = { error };
      run.stop.abort(error);
    })
    .finally(() => {
      calls.finished += 1;
      calls.inFlight.delete(batch);
    });
  calls.inFlight.set(batch, call);
}

/**
 * Whether the run's next call is a probe: no answer has shown the yield yet, and the first batch is expected,
 * at the default yield and its margin, to reach half the answer limit (a dialogue of many user lines). Then that
 * call goes alone, cut to what a dense dialogue's answer fits (the rest goes back to the queue), and the batches after it are split at what its answer showed, rather than sent
 * together at a guess; a run of small batches (an agent's few user lines) sends them together as planned.
 */
function probes(run: ExtractionRun): boolean {
  return run.probeFirst && run.answerYield.lines === 0;
}

/**
 * Splits the batch at `position`, in place, while its answer is expected to pass `limits.maxFactsPerAnswer` at
 * the yield this run's answers have shown (`answer-yield.ts`): a split before the call costs nothing, one after
 * it costs the answer thrown away.
 */
function splitWhileOverLimit(run: ExtractionRun, position: number): void {
  // The probe is cut to what a dense dialogue's answer fits, and after it a batch is sized at the yield the
  // probe showed (a dialogue's facts come from its user lines). In a run without a probe only a limit the
  // answers came near binds: an agent's facts come from tool output as much as from its few user lines.
  const limit = run.options.limits.maxFactsPerAnswer;
  const probe = probes(run);
  if (!run.probeFirst && !limitBinds(run.answerYield, limit)) return;
  if (probe && run.queue.length < PROBE_CUT_MIN_BATCHES) return;
  const over = (batch: Batch): boolean =>
    probe ? probeOverLimit(batch, limit) : expectedOverLimit(run.answerYield, batch, limit);
  for (;;) {
    const batch = run.queue[position] as Batch;
    if (!over(batch)) return;
    // A probe keeps the sessions a dense answer fits and leaves the rest one batch, as planned (halving it
    // again and again would cost a sparse run a call for each half); any other batch is halved.
    const halves = splitBatch(batch, probe ? probeSegments(batch, limit) : undefined);
    if (halves === undefined) return;
    run.queue.splice(position, 1, ...halves);
    run.tally.splits.beforeSending += 1;
  }
}

/** How many of a batch's first segments a probe carries: as many as a dense dialogue's answer fits, at least one. */
function probeSegments(batch: Batch, limit: number): number {
  let lines = 0;
  let segments = 0;
  for (const segment of batch.segments) {
    lines += segmentUserLines(segment);
    if (segments > 0 && lines * PROBE_FACTS_PER_USER_LINE * YIELD_MARGIN > limit) break;
    segments += 1;
  }
  return segments;
}

/** Sends the queued batches, in order and in parallel as they allow, until all are answered or set aside. */
export async function runCalls(run: ExtractionRun): Promise<void> {
  const { signal } = run.options;
  const onAbort = (): void => run.stop.abort(signal?.reason);
  if (signal?.aborted === true) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const calls: CallsInFlight = { inFlight: new Map(), finished: 0, failure: undefined };
  try {
    while (calls.failure === undefined && (run.queue.length > 0 || calls.inFlight.size > 0)) {
      const position = nextToStart(run, calls);
      if (position === -1) {
        await Promise.race(calls.inFlight.values());
        continue;
      }
      splitWhileOverLimit(run, position);
      startOrDefer(run, calls, run.queue.splice(position, 1)[0] as Batch);
    }
    await Promise.all(calls.inFlight.values());
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (calls.failure !== undefined) throw calls.failure.error;
}
