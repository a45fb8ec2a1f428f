/**
 * One extraction call of a batch: its answer (the message batch's when it gave one, else a call now), read
 * within the limits, its facts tied to the batch's sessions and kept for the later calls to see. An answer
 * cut at the output limit or with too many facts is asked again in halves; one dropped or invalid leaves the
 * batch's sessions waiting, with the reason.
 */
import { splitBatch, stripControlCharacters, type Batch } from '../../digest/index.js';
import { OutputLimitError } from '../../model/index.js';
import type { GenerateObjectRequest, TokenUsage } from '../../model/types.js';
import type { WaitReason } from '../../core/run.js';
import { AnswerFactLimitError, droppedAnswer, type AnswerRead } from './answer-reader.js';
import type { ExtractedFact, ExtractionAnswer } from './extraction.js';
import { digestKey } from './extraction-request.js';
import type { ExtractionRun } from './extract-state.js';
import { observeAnswer } from './answer-yield.js';
import { countAnswer, countBatched } from './extract-tally.js';
import { runFactId } from './replaces.js';
import { markUnsent } from './unsent-sessions.js';

/** An answer to a batch's request, and whether it came from the message batch. */
interface CallAnswer {
  readonly value: ExtractionAnswer;
  readonly usage: TokenUsage;
  readonly attempts: number;
  readonly batched: boolean;
}

/** Text with control characters removed, null left as is. */
function withoutControlCharacters(text: string | null): string | null {
  return text === null ? null : stripControlCharacters(text);
}

/**
 * Candidates are tied to the sessions of their batch: unknown source ids are dropped, none means all. Control
 * characters (a NUL the model echoed) leave the text here, before screening, quarantine and memory see it.
 */
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
  return {
    ...candidate,
    title: stripControlCharacters(candidate.title),
    body: stripControlCharacters(candidate.body),
    why: withoutControlCharacters(candidate.why),
    howToApply: withoutControlCharacters(candidate.howToApply),
    sources,
    observed,
  };
}

/**
 * The answer of a batch: the message batch's, when it gave a usable one (or one to handle as the call's:
 * cut, refused, too large, thrown from here), else a call now.
 */
async function answerOf(
  run: ExtractionRun,
  batch: Batch,
  request: GenerateObjectRequest<ExtractionAnswer>,
): Promise<CallAnswer> {
  const { options } = run;
  const key = digestKey(batch);
  const prepared = options.prepared?.get(key);
  options.prepared?.delete(key);
  if (prepared?.outcome === 'answered') {
    countBatched(run.tally, prepared.usage, options.costOf);
    return { value: prepared.value, usage: prepared.usage, attempts: 1, batched: true };
  }
  if (prepared?.outcome === 'unusable') {
    countBatched(run.tally, prepared.usage, options.costOf);
    if (droppedAnswer(prepared.error) !== undefined || prepared.error instanceof OutputLimitError) {
      throw prepared.error;
    }
  }
  const answer = await options.model().generateObject(request);
  return { ...answer, batched: false };
}

/** A batch asked again in two halves, in its place (before every later part of its sessions still queued). */
function splitOrWait(
  run: ExtractionRun,
  batch: Batch,
  reason: WaitReason,
  alone: string,
  problem: string,
): void {
  const halves = splitBatch(batch);
  if (halves === undefined) {
    markUnsent(batch, run.unsent, reason, alone);
    for (const sessionId of batch.sessionIds) run.problems.push({ sessionId, reason: problem });
    return;
  }
  run.tally.splits[reason === 'output-limit' ? 'output' : 'facts'] += 1;
  run.queue.unshift(...halves);
}

/**
 * The batch's answer, or undefined when there is none to read: dropped (its sessions wait) or cut at the
 * output limit (split). Any other failure is thrown.
 */
async function answerOrHandle(
  run: ExtractionRun,
  batch: Batch,
  request: GenerateObjectRequest<ExtractionAnswer>,
): Promise<CallAnswer | undefined> {
  try {
    return await answerOf(run, batch, request);
  } catch (error) {
    const dropped = droppedAnswer(error);
    if (dropped !== undefined) {
      run.tally.droppedAnswers += 1;
      markUnsent(batch, run.unsent, dropped.reason, dropped.detail);
      return undefined;
    }
    if (!(error instanceof OutputLimitError)) throw error;
    const limit = run.options.maxOutputTokens;
    splitOrWait(
      run,
      batch,
      'output-limit',
      `the answer for one message passes the output limit of ${limit} tokens even alone; raise model.maxOutputTokens`,
      `the answer for one message passes the output limit of ${limit} tokens; raise model.maxOutputTokens (the session waits at that message)`,
    );
    return undefined;
  }
}

/**
 * The facts of an answer worth keeping, or undefined when it is not read: too many facts (split) or none
 * valid (its sessions wait). Any other failure is thrown.
 */
function readOrHandle(run: ExtractionRun, batch: Batch, answer: CallAnswer): AnswerRead | undefined {
  const anchor = (fact: ExtractedFact): ExtractedFact =>
    anchorCandidate(fact, batch.sessionIds, run.gathered.sessionDates);
  try {
    return run.reader.read(answer.value.facts, anchor);
  } catch (error) {
    if (error instanceof AnswerFactLimitError) {
      observeAnswer(run.answerYield, batch, error.facts);
      splitOrWait(
        run,
        batch,
        'answer-fact-limit',
        `${error.message} even for one message; raise ${error.setting}`,
        `${error.message} for one message; raise ${error.setting} (the session waits at that message)`,
      );
      return undefined;
    }
    const dropped = droppedAnswer(error);
    if (dropped === undefined) throw error;
    run.tally.invalidAnswers += 1;
    markUnsent(batch, run.unsent, dropped.reason, dropped.detail);
    for (const sessionId of batch.sessionIds)
      run.problems.push({
        sessionId,
        reason: `${dropped.detail} (the model's answer did not match the fact schema)`,
      });
    return undefined;
  }
}

/**
 * Keeps what an answer gave: its sessions count as answered, those past `maxFactsPerSession` wait, facts
 * dropped are reported, and each fact kept is listed to the later calls with what its call was shown.
 */
function keepRead(
  run: ExtractionRun,
  batch: Batch,
  read: AnswerRead,
  call: { readonly seen: ReadonlySet<string>; readonly listed: ReadonlySet<string>; readonly number: number },
): void {
  for (const sessionId of batch.sessionIds) run.unsent.answered.add(sessionId);
  if (read.overSessionLimit.size > 0) {
    markUnsent(
      batch,
      run.unsent,
      'session-fact-limit',
      `its facts this run reached limits.maxFactsPerSession (${run.options.limits.maxFactsPerSession}); the rest is read in the next run`,
      read.overSessionLimit,
    );
  }
  const droppedHere = Object.entries(read.dropped);
  if (droppedHere.length > 0) {
    const described = droppedHere.map(([reason, count]) => `${count} ${reason}`).join(', ');
    for (const sessionId of batch.sessionIds)
      run.problems.push({
        sessionId,
        reason: `the model's answer for it held invalid facts, dropped (${described}); the valid ones were kept`,
      });
  }
  for (const candidate of read.facts) {
    run.runEntries.push({
      id: runFactId(run.candidates.length),
      type: candidate.type,
      title: candidate.title,
      hook: candidate.body,
    });
    run.candidates.push(candidate);
    run.shown.push({ seen: call.seen, call: call.number });
    run.listedTo.push(call.listed);
  }
}

/** Runs call number `callNumber` for a batch: asks, counts the answer (paid for whether read or not), keeps it. */
export async function runCall(run: ExtractionRun, batch: Batch, callNumber: number): Promise<void> {
  const { request, seen, listed } = run.requestFor(batch, run.runEntries, run.stop.signal);
  const answer = await answerOrHandle(run, batch, request);
  if (answer === undefined) return;
  countAnswer(run.tally, answer, run.options.costOf);
  const read = readOrHandle(run, batch, answer);
  if (read === undefined) return;
  observeAnswer(run.answerYield, batch, answer.value.facts.length);
  keepRead(run, batch, read, { seen, listed, number: callNumber });
}
