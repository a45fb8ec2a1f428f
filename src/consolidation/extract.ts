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
import { splitBatch, stripControlCharacters, type Batch } from '../digest/index.js';
import type { Fact } from '../memory/types.js';
import { OutputLimitError } from '../model/index.js';
import { hookOf, rankFacts } from '../memory/index.js';
import {
  addUsage,
  emptyUsage,
  type BatchItemResult,
  type GenerateObjectRequest,
  type ModelProvider,
  type TokenUsage,
} from '../model/types.js';
import { createHash } from 'node:crypto';
import { estimateTokens } from '../digest/estimate-tokens.js';
import {
  buildExtractionParts,
  EXTRACTION_INSTRUCTIONS,
  EXTRACTION_SCHEMA_NAME,
  ExtractionAnswer,
  ExtractionOutput,
  type ExtractedFact,
  type IndexEntry,
} from './extraction.js';
import type { Gathered } from './gather.js';
import type { FactDropReason, RunProgress, WaitReason } from '../core/run.js';
import { createMemoryList, type MemoryListFact } from './memory-list.js';
import { normalizeText } from './similarity.js';
import { checkUpdates } from './update-check.js';
import {
  AnswerFactLimitError,
  createAnswerReader,
  droppedAnswer,
  type AnswerLimits,
  type AnswerRead,
} from './answer-reader.js';

export type { AnswerLimits } from './answer-reader.js';

/**
 * Most active facts the selector considers (in ranking order), so a memory of 100,000 facts does not cost a
 * BM25 index of all of them on every run; what a call shows is chosen among these by relevance and recency.
 */
export const PROMPT_INDEX_FACTS = 5_000;

export interface Extracted {
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
  /** The update check (`update-check.ts`): its calls (in `calls` too), new facts looked at again, updates found. */
  readonly updateCheck: { readonly calls: number; readonly checked: number; readonly found: number };
}

/** One answered extraction call's tokens, for the run record and the benchmark. */
export interface CallRecord {
  readonly inputTokens: number;
  /** Output tokens, thinking included: what the effort setting changes. */
  readonly outputTokens: number;
  /** The answer came from a message batch (billed at the batch price). */
  readonly batched?: boolean;
}

/** An answer of a message batch, for the batch of the run whose digest it carries (see {@link digestKey}). */
export type PreparedAnswer = BatchItemResult<ExtractionAnswer>;

/** The key of a batch's digest: the same session messages give the same key in the run that collects. */
export function digestKey(batch: Pick<Batch, 'text'>): string {
  return createHash('sha256').update(batch.text).digest('hex');
}

/** What a run's answers from a message batch came to: calls, and dollars at the batch price and at list. */
export interface BatchedCalls {
  readonly calls: number;
  readonly usage: TokenUsage;
  readonly costUsd: number | undefined;
  readonly listCostUsd: number | undefined;
}

/** The run's facts (by {@link runFactId}) one call was shown, and the call's number. */
export interface ShownToCall {
  readonly seen: ReadonlySet<string>;
  readonly call: number;
}

const RUN_ID = /^run-\d+$/;

type WaitingMap = Map<string, { reason: WaitReason; detail: string }>;

/**
 * First message of each session in a batch that was not sent, merged into `firstUnsent` (lowest wins), and
 * why it waits (the first reason a session meets stays: its later parts wait because of it). A session none
 * of whose parts was answered waits whole (0), even when its first digest line is a later message (the
 * messages before it were noise): it is not consolidated in part up to there.
 */
function markUnsent(
  batch: Batch,
  state: { firstUnsent: Map<string, number>; waiting: WaitingMap; answered: ReadonlySet<string> },
  reason: WaitReason,
  detail: string,
  only?: ReadonlySet<string>,
): void {
  const { firstUnsent, waiting, answered } = state;
  for (const segment of batch.segments) {
    if (only !== undefined && !only.has(segment.sessionId)) continue;
    const line = segment.lines[0]?.message;
    if (line === undefined) continue;
    const first = answered.has(segment.sessionId) ? line : 0;
    const known = firstUnsent.get(segment.sessionId);
    if (known === undefined || first < known) firstUnsent.set(segment.sessionId, first);
    if (!waiting.has(segment.sessionId)) waiting.set(segment.sessionId, { reason, detail });
  }
}

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

/** The facts a call's memory list is chosen from: the top-ranked active facts, as `MEMORY.md` ranks them. */
export function promptIndex(facts: readonly Fact[], now: Date): MemoryListFact[] {
  return rankFacts(
    facts.filter((fact) => fact.status === 'active'),
    now,
  )
    .slice(0, PROMPT_INDEX_FACTS)
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

/** Id under which a fact of an earlier call of this run is listed to later calls (it has no fact id yet). */
export function runFactId(position: number): string {
  return `run-${position + 1}`;
}

/**
 * Candidates of one run whose `replaces` names another candidate of the same run (by {@link runFactId}, earlier
 * or later in the run). Of the two, the newer observation (on the same day, the one that names the other) wins,
 * and nothing is lost:
 * - the winner also names the facts in memory the older one replaces, so memory's chain continues through it;
 * - the older one stays, as history: the winner names it by its exact title (reconcile resolves the title of a
 *   fact of the same batch and type, after applying the older first), so it is kept superseded by the winner
 *   (Lisbon ← Porto ← Braga), in the archive like any replaced fact;
 * - only when the two are of one day or of different types (no order to apply them in, no title to name) is
 *   the older one left out, the same subject kept once at its newest, as the model asked.
 */
export function resolveRunReplaces(candidates: readonly ExtractedFact[]): ExtractedFact[] {
  const result = candidates.map((candidate) => ({ ...candidate, replaces: [...candidate.replaces] }));
  const isRunId = (id: string): boolean => /^run-\d+$/.test(id);
  const dropped = new Set<number>();
  const paired = new Set<string>();
  result.forEach((candidate, index) => {
    for (const id of candidate.replaces.filter(isRunId)) {
      const target = Number(id.slice(4)) - 1;
      const other = result[target];
      const pair = `${Math.min(index, target)}:${Math.max(index, target)}`;
      if (other === undefined || target === index || paired.has(pair)) continue;
      if (dropped.has(target) || dropped.has(index)) continue;
      paired.add(pair);
      const [winner, loser, loserIndex] =
        other.observed > candidate.observed ? [other, candidate, index] : [candidate, other, target];
      const memoryIds = loser.replaces.filter((replaced) => !isRunId(replaced));
      const kept = loser.observed < winner.observed && loser.type === winner.type;
      if (!kept) dropped.add(loserIndex);
      winner.replaces = [...new Set([...winner.replaces, ...memoryIds, ...(kept ? [loser.title] : [])])];
    }
  });
  return result
    .filter((_, index) => !dropped.has(index))
    .map((candidate) => ({ ...candidate, replaces: candidate.replaces.filter((id) => !isRunId(id)) }));
}

/**
 * A call is shown only the run's facts that were in when it started and that its memory list had room for;
 * calls that ran at the same time could not see each other's facts, so neither could say that it replaces
 * the other. Of two facts of calls where the later was not shown the earlier, with the same type and title (the model's name for the subject), the
 * later one names the earlier (by {@link runFactId}), as a call made after it would have; {@link
 * resolveRunReplaces} then keeps the newer observation. Facts a call was shown, and facts of one answer, are
 * left to the model's own `replaces`.
 */
export function linkUnseenSameTitles(
  candidates: readonly ExtractedFact[],
  shown: readonly ShownToCall[],
): ExtractedFact[] {
  const byKey = new Map<string, number[]>();
  return candidates.map((candidate, index) => {
    const key = `${candidate.type}\n${normalizeText(candidate.title)}`;
    const earlier = byKey.get(key) ?? [];
    byKey.set(key, [...earlier, index]);
    const own = shown[index];
    if (own === undefined) return candidate;
    const unseen = earlier.filter(
      (position) => !own.seen.has(runFactId(position)) && shown[position]?.call !== own.call,
    );
    if (unseen.length === 0) return candidate;
    return { ...candidate, replaces: [...new Set([...candidate.replaces, ...unseen.map(runFactId)])] };
  });
}

export async function extractFacts(
  gathered: Gathered,
  options: {
    model: () => ModelProvider;
    /** Active facts in ranking order (`promptIndex`), that each call's list is chosen from. */
    index: readonly MemoryListFact[];
    /** Most tokens of memory list one call carries (`limits.memoryTokensPerCall`). */
    memoryTokensPerCall: number;
    today: string;
    maxOutputTokens: number;
    /** USD of one call's usage (`batched`: at the batch price); undefined when the model has no known price. */
    costOf?: ((usage: TokenUsage, batched?: boolean) => number | undefined) | undefined;
    /**
     * Answers a message batch already gave, by {@link digestKey}: a batch of the run whose digest has one
     * takes it instead of a call (a usable answer) or handles it as the call's own (cut at the output limit:
     * split and sent; refused or too large: dropped); one with no usable answer (errored, expired, bad
     * output) is sent synchronously, as are the batches that depend on earlier answers.
     */
    prepared?: Map<string, PreparedAnswer> | undefined;
    /** Most calls this run may make (`limits.maxCallsPerRun`). Default: no limit. */
    maxCalls?: number;
    /** The limits each answer is read within. */
    limits: AnswerLimits;
    /**
     * Most calls in flight at once (`model.concurrency`); default 1. Batches of different sessions go in
     * parallel; the parts of one session go in order. The key's gate caps all runs together as well.
     */
    concurrency?: number;
    /** Statements of the project's instruction files, shown as already known (see `project-docs.ts`). */
    known?: readonly string[];
    signal?: AbortSignal | undefined;
    onProgress: (progress: RunProgress) => void;
  },
): Promise<Extracted> {
  const candidates: ExtractedFact[] = [];
  const firstUnsent = new Map<string, number>();
  const notes: string[] = [];
  const problems: { sessionId: string; reason: string }[] = [];
  const waiting: WaitingMap = new Map();
  const reader = createAnswerReader(options.limits);
  /** Sessions with at least one part answered. */
  const answered = new Set<string>();
  const unsent = { firstUnsent, waiting, answered };
  let droppedAnswers = 0;
  const maxCalls = options.maxCalls ?? Number.POSITIVE_INFINITY;
  let usage = emptyUsage();
  let calls = 0;
  let retries = 0;
  let costUsd: number | undefined = 0;
  const splits = { output: 0, facts: 0 };
  let invalidAnswers = 0;
  let finished = 0;
  const memoryList = runMemoryList(options.index, options.memoryTokensPerCall, gathered.batches.length);
  const runEntries: IndexEntry[] = [];
  const queue: Batch[] = gathered.batches.map((entry) => entry.batch);
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const perCall: CallRecord[] = [];
  // A session that lost a part stops here: its later parts wait too, so the ledger's progress is a prefix.
  const blocked = (batch: Batch): boolean =>
    batch.segments.some((segment) => {
      const stop = firstUnsent.get(segment.sessionId);
      return stop !== undefined && (segment.lines[0]?.message ?? Number.POSITIVE_INFINITY) >= stop;
    });
  /** Sessions of the calls in flight: a batch with one of them waits for that call (its earlier part). */
  const inFlight = new Map<Batch, Promise<void>>();
  const busySessions = (): Set<string> =>
    new Set([...inFlight.keys()].flatMap((running) => running.sessionIds));
  // One failure that is not an answer's (auth, the budget's abort …) ends the run: the calls in flight stop.
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted === true) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let failure: { error: unknown } | undefined;

  /** Per candidate: the run's facts its call was shown (by {@link runFactId}), and which call it came from. */
  const shown: ShownToCall[] = [];
  /** Per candidate: every id its call's memory list showed (memory's and the run's), for the update check. */
  const listedTo: ReadonlySet<string>[] = [];

  const requestFor = extractionRequests(memoryList, options);
  const batchedCalls = {
    calls: 0,
    usage: emptyUsage(),
    costUsd: 0 as number | undefined,
    listCostUsd: 0 as number | undefined,
  };
  /** Adds a batch answer's billed usage, at the batch price and at list. */
  const countBatched = (answerUsage: TokenUsage): void => {
    batchedCalls.calls += 1;
    batchedCalls.usage = addUsage(batchedCalls.usage, answerUsage);
    const batchCost = options.costOf?.(answerUsage, true);
    const listCost = options.costOf?.(answerUsage, false);
    batchedCalls.costUsd =
      batchedCalls.costUsd === undefined || batchCost === undefined
        ? undefined
        : batchedCalls.costUsd + batchCost;
    batchedCalls.listCostUsd =
      batchedCalls.listCostUsd === undefined || listCost === undefined
        ? undefined
        : batchedCalls.listCostUsd + listCost;
    usage = addUsage(usage, answerUsage);
    costUsd = costUsd === undefined || batchCost === undefined ? undefined : costUsd + batchCost;
  };

  /**
   * The answer of a batch: the message batch's, when it gave a usable one (or one to handle as the call's:
   * cut, refused, too large, thrown from here), else a call now.
   */
  async function answerOf(
    batch: Batch,
    request: GenerateObjectRequest<ExtractionAnswer>,
  ): Promise<{ value: ExtractionAnswer; usage: TokenUsage; attempts: number; batched: boolean }> {
    const key = digestKey(batch);
    const prepared = options.prepared?.get(key);
    options.prepared?.delete(key);
    if (prepared?.outcome === 'answered') {
      countBatched(prepared.usage);
      return { value: prepared.value, usage: prepared.usage, attempts: 1, batched: true };
    }
    if (prepared?.outcome === 'unusable') {
      countBatched(prepared.usage);
      if (droppedAnswer(prepared.error) !== undefined || prepared.error instanceof OutputLimitError) {
        throw prepared.error;
      }
    }
    const answer = await options.model().generateObject(request);
    return { ...answer, batched: false };
  }

  /** A batch asked again in two halves, in its place (before every later part of its sessions still queued). */
  function splitOrWait(batch: Batch, reason: WaitReason, alone: string, problem: string): void {
    const halves = splitBatch(batch);
    if (halves === undefined) {
      markUnsent(batch, unsent, reason, alone);
      for (const sessionId of batch.sessionIds) problems.push({ sessionId, reason: problem });
      return;
    }
    splits[reason === 'output-limit' ? 'output' : 'facts'] += 1;
    queue.unshift(...halves);
  }

  async function runCall(batch: Batch, callNumber: number): Promise<void> {
    const { request, seen, listed } = requestFor(batch, runEntries, stop.signal);
    let result;
    try {
      result = await answerOf(batch, request);
    } catch (error) {
      const dropped = droppedAnswer(error);
      if (dropped !== undefined) {
        droppedAnswers += 1;
        markUnsent(batch, unsent, dropped.reason, dropped.detail);
        return;
      }
      if (!(error instanceof OutputLimitError)) throw error;
      splitOrWait(
        batch,
        'output-limit',
        `the answer for one message passes the output limit of ${options.maxOutputTokens} tokens even alone; raise model.maxOutputTokens`,
        `the answer for one message passes the output limit of ${options.maxOutputTokens} tokens; raise model.maxOutputTokens (the session waits at that message)`,
      );
      return;
    }
    // An answer is paid for whether or not it is read.
    retries += result.attempts - 1;
    perCall.push({
      outputTokens: result.usage.outputTokens,
      inputTokens: result.usage.inputTokens,
      ...(result.batched ? { batched: true } : {}),
    });
    if (!result.batched) {
      usage = addUsage(usage, result.usage);
      const callCost = options.costOf?.(result.usage);
      costUsd = costUsd === undefined || callCost === undefined ? undefined : costUsd + callCost;
    }
    const anchor = (fact: ExtractedFact): ExtractedFact =>
      anchorCandidate(fact, batch.sessionIds, gathered.sessionDates);
    let read: AnswerRead;
    try {
      read = reader.read(result.value.facts, anchor);
    } catch (error) {
      if (error instanceof AnswerFactLimitError) {
        splitOrWait(
          batch,
          'answer-fact-limit',
          `${error.message} even for one message; raise ${error.setting}`,
          `${error.message} for one message; raise ${error.setting} (the session waits at that message)`,
        );
        return;
      }
      const dropped = droppedAnswer(error);
      if (dropped === undefined) throw error;
      invalidAnswers += 1;
      markUnsent(batch, unsent, dropped.reason, dropped.detail);
      for (const sessionId of batch.sessionIds)
        problems.push({
          sessionId,
          reason: `${dropped.detail} (the model's answer did not match the fact schema)`,
        });
      return;
    }
    for (const sessionId of batch.sessionIds) answered.add(sessionId);
    if (read.overSessionLimit.size > 0) {
      markUnsent(
        batch,
        unsent,
        'session-fact-limit',
        `its facts this run reached limits.maxFactsPerSession (${options.limits.maxFactsPerSession}); the rest is read in the next run`,
        read.overSessionLimit,
      );
    }
    const droppedHere = Object.entries(read.dropped);
    if (droppedHere.length > 0) {
      const described = droppedHere.map(([reason, count]) => `${count} ${reason}`).join(', ');
      for (const sessionId of batch.sessionIds)
        problems.push({
          sessionId,
          reason: `the model's answer for it held invalid facts, dropped (${described}); the valid ones were kept`,
        });
    }
    for (const candidate of read.facts) {
      runEntries.push({
        id: runFactId(candidates.length),
        type: candidate.type,
        title: candidate.title,
        hook: candidate.body,
      });
      candidates.push(candidate);
      shown.push({ seen, call: callNumber });
      listedTo.push(listed);
    }
  }

  /**
   * The first queued batch that may start now: none of its sessions is in flight or in an earlier queued
   * batch (a session's parts go in order, each seeing the facts of the one before).
   */
  function nextReady(): number {
    const busy = busySessions();
    for (let position = 0; position < queue.length; position++) {
      const batch = queue[position] as Batch;
      if (batch.sessionIds.every((sessionId) => !busy.has(sessionId))) return position;
      for (const sessionId of batch.sessionIds) busy.add(sessionId);
    }
    return -1;
  }

  try {
    while (failure === undefined && (queue.length > 0 || inFlight.size > 0)) {
      // With a cached prefix (the stable part of the memory list), the first call goes alone: calls sent
      // together before it is written would each pay a cache write instead of reading it.
      const warming = memoryList.stable.length > 0 && finished === 0 && inFlight.size > 0;
      const position = inFlight.size < concurrency && !warming ? nextReady() : -1;
      if (position === -1) {
        await Promise.race(inFlight.values());
        continue;
      }
      const batch = queue.splice(position, 1)[0] as Batch;
      if (calls >= maxCalls || blocked(batch)) {
        markUnsent(
          batch,
          unsent,
          'call-budget',
          `the run made its limits.maxCallsPerRun (${maxCalls}) calls; the session continues in the next run`,
        );
        continue;
      }
      options.onProgress({ phase: 'extract', done: finished, total: calls + queue.length + 1 });
      calls += 1;
      const call = runCall(batch, calls)
        .catch((error: unknown) => {
          if (failure === undefined) failure = { error };
          stop.abort(error);
        })
        .finally(() => {
          finished += 1;
          inFlight.delete(batch);
        });
      inFlight.set(batch, call);
    }
    await Promise.all(inFlight.values());
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  if (failure !== undefined) throw failure.error;
  // A second look for the facts whose older version the extraction calls did not show (update-check.ts).
  const byCall = new Map<number, string[]>();
  shown.forEach((entry, position) => {
    const ids = byCall.get(entry.call) ?? [];
    ids.push(runFactId(position));
    byCall.set(entry.call, ids);
  });
  const check = await checkUpdates(candidates, {
    index: options.index,
    runId: runFactId,
    shown: listedTo.map(
      (listed, position) => new Set([...listed, ...(byCall.get(shown[position]?.call ?? -1) ?? [])]),
    ),
    model: options.model,
    maxCalls: maxCalls - calls,
    maxOutputTokens: options.maxOutputTokens,
    costOf: options.costOf,
    signal: options.signal,
  });
  calls += check.calls;
  usage = addUsage(usage, check.usage);
  costUsd = costUsd === undefined || check.costUsd === undefined ? undefined : costUsd + check.costUsd;
  notes.push(...check.notes);
  notes.push(...reader.notes());
  if (droppedAnswers > 0) {
    notes.push(
      `${droppedAnswers} answer(s) were dropped (refused or too large); their sessions wait for the next run`,
    );
  }
  if (splits.output > 0) {
    notes.push(
      `${splits.output} answer(s) stopped at the output limit (${options.maxOutputTokens} tokens); each batch was split in two and sent again as halves, never as the same request`,
    );
  }
  if (splits.facts > 0) {
    notes.push(
      `${splits.facts} answer(s) held more facts than limits.maxFactsPerAnswer (${options.limits.maxFactsPerAnswer}) or limits.maxFactsPerSession (${options.limits.maxFactsPerSession}) allow; each batch was split in two and asked again, so no fact was cut`,
    );
  }
  if (invalidAnswers > 0) {
    notes.push(`${invalidAnswers} answer(s) held facts and none valid; their sessions wait for the next run`);
  }
  options.onProgress({ phase: 'extract', done: calls, total: calls });
  return {
    candidates: resolveRunReplaces(linkUnseenSameTitles(check.candidates, shown)),
    updateCheck: { calls: check.calls, checked: check.checked, found: check.found },
    calls,
    retries,
    usage,
    costUsd: options.costOf === undefined ? undefined : costUsd,
    firstUnsent,
    perCall,
    notes,
    problems,
    waiting,
    factsDropped: reader.factsDropped,
    batched:
      options.costOf === undefined
        ? { ...batchedCalls, costUsd: undefined, listCostUsd: undefined }
        : { ...batchedCalls },
  };
}

/** The options a run's extraction requests are built from. */
export interface ExtractionRequestOptions {
  readonly today: string;
  readonly maxOutputTokens: number;
  readonly limits: Pick<AnswerLimits, 'maxAnswerChars'>;
  readonly known?: readonly string[] | undefined;
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
): (
  batch: Batch,
  runEntries: readonly IndexEntry[],
  signal?: AbortSignal,
) => { request: GenerateObjectRequest<ExtractionAnswer>; seen: Set<string>; listed: Set<string> } {
  return (batch, runEntries, signal) => {
    const listed = memoryList.select(batch.text, batch.estimatedTokens, runEntries);
    const seen = new Set(listed.map((entry) => entry.id).filter((id) => RUN_ID.test(id)));
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
