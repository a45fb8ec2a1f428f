/**
 * Batch mode: a run's independent extraction calls as one message batch (half price), in two steps.
 *
 * 1. **Submit** (under the locks): the run gathers as usual, sends the first part of every session (the
 *    batches that depend on no earlier answer) as a message batch, records it in `.dreamd/batch.json`
 *    (`space/batch-in-flight.ts`) and releases the locks. Nothing else is written; the ledger is not touched.
 * 2. **Collect** (under the locks again, when the batch has ended): a run restricted to the batch's sessions
 *    re-reads memory, gathers again (the same messages give the same digests, matched by {@link digestKey}),
 *    takes each batch answer in place of its call, and sends synchronously what depends on earlier answers
 *    (a session's later parts, the halves of an answer cut at the output limit) and what the batch did not
 *    answer (an errored request, bad output): a long session is not held a day per part. It reconciles and
 *    commits as any run, and removes the record in the same run. Sessions the batch does not carry wait.
 *
 * Between the steps the run waits without locks, polling with backoff (`model.batchPollSeconds`, doubling up
 * to 15 minutes). A restarted daemon finds the record and collects instead of submitting again. A batch that
 * expired (24 hours), was canceled or is gone leaves its sessions waiting (`batch-failed`) and nothing
 * written; the next run sends them again. A manual run while a batch is pending goes on synchronously
 * without the batch's sessions (`batch-pending`). An endpoint without Anthropic's batch API (the submit answers
 * 404, or not a message batch: `NoBatchApiError`) gets ordinary calls instead, with a note naming it.
 */
import type { Config, Space } from '../../config/schema.js';
import type { BatchRecord, RunOptions, RunRequest, RunSummary, WaitingSession } from '../../core/run.js';
import type { ScanEntry, ScanResult } from '../../transcripts/index.js';
import type { BatchedCalls } from '../extraction/extract-tally.js';
import { priceFor, roundUsd } from '../../cost/index.js';
import { BatchResultsUnreadableError, ModelError, ModelErrorKind, errorMessage } from '../../errors.js';
import type { GenerateObjectRequest, MessageBatches, ModelProvider } from '../../model/types.js';
import {
  MAX_UNREADABLE_COLLECTIONS,
  clearBatchInFlight,
  filesOfBatch,
  readBatchInFlight,
  sessionsOfBatch,
  writeBatchInFlight,
  type BatchInFlight,
} from '../../space/index.js';
import type { Batch } from '../../digest/index.js';
import {
  digestKey,
  extractionRequests,
  runMemoryList,
  type PreparedAnswer,
} from '../extraction/extraction-request.js';
import {
  EXTRACTION_SCHEMA_NAME,
  ExtractionAnswer,
  ExtractionOutput,
  type MemoryListEntry,
} from '../extraction/extraction.js';
import type { Gathered } from '../gather/gather.js';
import type { MemoryListFact } from '../extraction/memory-list.js';
import { BATCH_EXPIRY_GRACE_MS, MAX_BATCH_POLL_MS } from './tunables.js';

/** What the run's locked part does about a message batch. */
export type BatchStage =
  /** Gather, then submit the independent calls as a batch and stop (see {@link submitExtractionBatch}). */
  | { readonly kind: 'submit' }
  /** Consolidate only the batch's sessions, with its answers (`failed`: it has none; its sessions wait). */
  | {
      readonly kind: 'collect';
      readonly pending: BatchInFlight;
      readonly answers: Map<string, PreparedAnswer>;
      readonly failed?: string | undefined;
      /** The batch's results could not be read: this run records the try and fails, naming the fix. */
      readonly unreadable?: { readonly tries: number; readonly error: unknown } | undefined;
    }
  /** A synchronous run while a batch is pending: its sessions are left to the run that collects it. */
  | { readonly kind: 'exclude'; readonly pending: BatchInFlight };

/** Whether this run asks for a batch: `--batch`, else `model.batch` and the trigger (the model aside). */
export function wantsBatch(config: Config, request: RunRequest): boolean {
  if (request.dryRun || request.batch === false) return false;
  if (request.batch === true) return true;
  return (
    config.model.batch === 'always' || (config.model.batch === 'scheduled' && request.trigger === 'schedule')
  );
}

/** Whether this run batches: it asks for a batch and the model has a batch API (not openai-compatible). */
export function runBatches(config: Config, request: RunRequest, model: ModelProvider): boolean {
  return model.batches !== undefined && wantsBatch(config, request);
}

/**
 * The batches of a run that depend on no earlier answer: the first part of every session (a batch none of
 * whose sessions is in an earlier batch), at most `maxCalls` of them.
 */
export function independentBatches(batches: readonly Batch[], maxCalls: number): Batch[] {
  const seen = new Set<string>();
  const independent: Batch[] = [];
  for (const batch of batches) {
    if (batch.sessionIds.every((sessionId) => !seen.has(sessionId)) && independent.length < maxCalls) {
      independent.push(batch);
    }
    for (const sessionId of batch.sessionIds) seen.add(sessionId);
  }
  return independent;
}

/**
 * Submits the independent calls of a gathered run as one message batch and records it; undefined when there
 * is none to send, or the model has no batch API (the run then goes on synchronously). The requests are built exactly as the synchronous calls would be, with no fact of the run
 * yet (every one of them is the first call of its sessions).
 */
export async function submitExtractionBatch(
  gathered: Gathered,
  options: {
    readonly memoryDir: string;
    readonly runId: string;
    readonly model: ModelProvider;
    readonly index: readonly MemoryListFact[];
    readonly memoryTokensPerCall: number;
    readonly today: string;
    readonly maxOutputTokens: number;
    readonly maxAnswerChars: number;
    readonly maxCalls: number;
    readonly known?: readonly string[] | undefined;
    readonly now: Date;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<BatchInFlight | undefined> {
  if (options.model.batches === undefined) return undefined;
  const api = options.model.batches;
  const batches = independentBatches(
    gathered.batches.map((entry) => entry.batch),
    options.maxCalls,
  );
  if (batches.length === 0) return undefined;
  const requestFor = extractionRequests(
    runMemoryList(options.index, options.memoryTokensPerCall, gathered.batches.length),
    {
      today: options.today,
      maxOutputTokens: options.maxOutputTokens,
      limits: { maxAnswerChars: options.maxAnswerChars },
      known: options.known,
    },
  );
  const none: MemoryListEntry[] = [];
  const fileOf = new Map(gathered.records.map((record) => [record.sessionId, record.file]));
  const requests = batches.map((batch, position) => ({
    customId: `part-${position + 1}`,
    digest: digestKey(batch),
    sessions: [...batch.sessionIds],
    files: batch.sessionIds.flatMap((sessionId) => fileOf.get(sessionId) ?? []),
    request: requestFor(batch, none).request,
  }));
  const state = await api.submit(
    requests.map(({ customId, request }) => ({ customId, request })),
    options.signal,
  );
  const pending: BatchInFlight = {
    batchId: state.id,
    model: options.model.label,
    runId: options.runId,
    submittedAt: options.now.toISOString(),
    expiresAt: state.expiresAt,
    requests: requests.map(({ customId, digest, sessions, files }) => ({
      customId,
      digest,
      sessions,
      files,
    })),
  };
  await writeBatchInFlight(options.memoryDir, pending);
  return pending;
}

/** Where a pending batch stands after the looks a run gives it. */
export type BatchWait =
  | { readonly kind: 'ended' }
  | { readonly kind: 'in-progress' }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * Looks at a pending batch until it ends (`wait`), or once. Each look waits twice as long as the one before,
 * from `pollMs` up to {@link MAX_BATCH_POLL_MS}. A batch past its expiry (and the grace) still in progress is
 * canceled and failed; one the provider no longer knows (404) is failed. The signal ends the wait (the batch
 * stays pending for the next run).
 */
export async function waitForBatch(
  model: ModelProvider,
  pending: BatchInFlight,
  options: {
    readonly wait: boolean;
    readonly pollMs: number;
    readonly now: () => Date;
    readonly signal?: AbortSignal | undefined;
    readonly onPoll?: ((looks: number) => void) | undefined;
  },
): Promise<BatchWait> {
  const api = batchApi(model);
  let delay = options.pollMs;
  for (let looks = 1; ; looks++) {
    let state;
    try {
      state = await api.retrieve(pending.batchId, options.signal);
    } catch (error) {
      if (error instanceof ModelError && error.status === 404) {
        return { kind: 'failed', reason: `batch ${pending.batchId} is gone (HTTP 404)` };
      }
      throw error;
    }
    options.onPoll?.(looks);
    if (state.status === 'ended') {
      return state.counts.succeeded > 0
        ? { kind: 'ended' }
        : { kind: 'failed', reason: describeFailure(pending.batchId, state.counts) };
    }
    if (options.now().getTime() > Date.parse(state.expiresAt) + BATCH_EXPIRY_GRACE_MS) {
      await api.cancel(pending.batchId, options.signal).catch(() => undefined);
      return {
        kind: 'failed',
        reason: `batch ${pending.batchId} passed its expiry (${state.expiresAt}) unfinished`,
      };
    }
    if (!options.wait) return { kind: 'in-progress' };
    await abortableSleep(delay, options.signal);
    delay = Math.min(delay * 2, MAX_BATCH_POLL_MS);
  }
}

function describeFailure(batchId: string, counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status}`);
  return `batch ${batchId} ended with no answer (${parts.join(', ') || 'no request'})`;
}

/** The answers of an ended batch by digest key, each read as the extraction call reads one. */
export async function collectBatchAnswers(
  model: ModelProvider,
  pending: BatchInFlight,
  requestOf: (customId: string) => GenerateObjectRequest<ExtractionAnswer> | undefined,
  signal?: AbortSignal,
): Promise<Map<string, PreparedAnswer>> {
  const results = await batchApi(model).results<ExtractionAnswer>(pending.batchId, requestOf, signal);
  const digestOf = new Map(pending.requests.map((request) => [request.customId, request.digest]));
  const answers = new Map<string, PreparedAnswer>();
  for (const [customId, result] of results) {
    const digest = digestOf.get(customId);
    if (digest !== undefined) answers.set(digest, result);
  }
  return answers;
}

/**
 * Cancels a space's pending batch and removes its record (on `rollback`, or on request); its sessions are
 * consolidated again by the next run. Returns the batch id, or undefined when none was pending. A batch the
 * provider no longer knows, or that already ended, is just forgotten.
 */
export async function cancelBatchInFlight(
  memoryDir: string,
  model: () => ModelProvider,
): Promise<string | undefined> {
  const pending = await readBatchInFlight(memoryDir);
  if (pending === undefined) return undefined;
  const api = model().batches;
  if (api !== undefined) {
    try {
      await api.cancel(pending.batchId);
    } catch (error) {
      if (!(error instanceof ModelError) || (error.status !== 404 && error.status !== 409)) throw error;
    }
  }
  await clearBatchInFlight(memoryDir);
  return pending.batchId;
}

/** The pending batch's sessions and its age, for `status`; and, when its results could not be read, the fix. */
export function describeBatchInFlight(pending: BatchInFlight, now: Date, spaceId: string): string {
  const minutes = Math.max(0, Math.round((now.getTime() - Date.parse(pending.submittedAt)) / 60_000));
  const age = minutes < 120 ? `${minutes} min` : `${(minutes / 60).toFixed(1)} h`;
  const described = `${pending.batchId} pending for ${age} (${pending.requests.length} request(s), ${sessionsOfBatch(pending).size} session(s); expires ${pending.expiresAt})`;
  const { unreadable } = pending;
  if (unreadable === undefined) return described;
  return (
    `${described}; its results could not be read in ${unreadable.tries} of ${MAX_UNREADABLE_COLLECTIONS} collections ` +
    `(last ${unreadable.lastAt}: ${unreadable.message}); given up after ${MAX_UNREADABLE_COLLECTIONS}, or now with ` +
    `\`dreamd batch cancel ${spaceId}\``
  );
}

function batchApi(model: ModelProvider): MessageBatches {
  if (model.batches === undefined) {
    throw new ModelError(`${model.label} has no batch API; set model.batch to "never"`, {
      retryable: false,
      kind: ModelErrorKind.badRequest,
    });
  }
  return model.batches;
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The batch steps around a run's locked part (`run`): submit when this run batches and none is pending, then
 * wait for the pending batch and collect it; a run that does not batch goes on without the pending batch's
 * sessions while it is in progress.
 */
export async function consolidateWithBatches(
  space: Space,
  request: RunRequest,
  runOptions: RunOptions,
  options: {
    readonly config: Config;
    readonly model: () => ModelProvider;
    readonly now: () => Date;
    readonly run: (stage: BatchStage | undefined) => Promise<RunSummary>;
  },
): Promise<RunSummary> {
  if (request.dryRun) return options.run(undefined);
  let pending = await readBatchInFlight(space.memoryDir);
  if (pending === undefined) {
    // The model is asked for its batch API only past the gates (the submit stage), as a synchronous run would.
    if (!wantsBatch(options.config, request)) return options.run(undefined);
    const submitted = await options.run({ kind: 'submit' });
    pending = await readBatchInFlight(space.memoryDir);
    if (pending === undefined || pending.runId !== submitted.runId) return submitted;
  }
  const model = options.model();
  if (model.batches === undefined) return options.run({ kind: 'exclude', pending });
  const wait = runBatches(options.config, request, model);
  const progress = runOptions.onProgress;
  const waited = await waitForBatch(model, pending, {
    wait,
    pollMs: options.config.model.batchPollSeconds * 1000,
    now: options.now,
    signal: runOptions.signal,
    onPoll: (looks) =>
      progress?.({
        phase: 'extract',
        done: 0,
        total: 1,
        message: `waiting for ${pending.batchId} (look ${looks})`,
      }),
  });
  if (waited.kind === 'in-progress') return options.run({ kind: 'exclude', pending });
  if (waited.kind === 'failed') {
    return options.run({ kind: 'collect', pending, answers: new Map(), failed: waited.reason });
  }
  // An answer is read with its request's schema and limits, the same for every extraction request.
  const reading: GenerateObjectRequest<ExtractionAnswer> = {
    system: '',
    prompt: '',
    schema: ExtractionAnswer,
    wireSchema: ExtractionOutput,
    schemaName: EXTRACTION_SCHEMA_NAME,
    maxAnswerChars: options.config.limits.maxAnswerChars,
    maxOutputTokens: options.config.model.maxOutputTokens,
  };
  const known = new Set(pending.requests.map((entry) => entry.customId));
  let answers;
  try {
    answers = await collectBatchAnswers(
      model,
      pending,
      (customId) => (known.has(customId) ? reading : undefined),
      runOptions.signal,
    );
  } catch (error) {
    if (runOptions.signal?.aborted === true || !aboutTheResults(error)) throw error;
    const tries = (pending.unreadable?.tries ?? 0) + 1;
    if (tries < MAX_UNREADABLE_COLLECTIONS) {
      return options.run({ kind: 'collect', pending, answers: new Map(), unreadable: { tries, error } });
    }
    return options.run({
      kind: 'collect',
      pending,
      answers: new Map(),
      failed: `the results of batch ${pending.batchId} could not be read in ${tries} collections (last: ${errorMessage(error)})`,
    });
  }
  return options.run({ kind: 'collect', pending, answers });
}

/**
 * Whether a failed collection is the batch's own fault (its results unreadable, its results route failing or
 * gone): such failures count towards giving the batch up. A missing key, an unreachable or overloaded endpoint
 * fail any call alike and leave the batch as it is.
 */
function aboutTheResults(error: unknown): boolean {
  if (!(error instanceof ModelError)) return true;
  const { kind } = error.details;
  return (
    kind === ModelErrorKind.badOutput || kind === ModelErrorKind.badRequest || kind === ModelErrorKind.server
  );
}

/**
 * Records a failed collection in the batch's record (under the space lock) and returns the error the run
 * fails with: it names the batch, the try and the fix.
 */
export async function recordUnreadableResults(
  space: Space,
  pending: BatchInFlight,
  unreadable: { readonly tries: number; readonly error: unknown },
  now: Date,
): Promise<BatchResultsUnreadableError> {
  const detail = errorMessage(unreadable.error);
  await writeBatchInFlight(space.memoryDir, {
    ...pending,
    unreadable: { tries: unreadable.tries, lastAt: now.toISOString(), message: detail },
  });
  return new BatchResultsUnreadableError(
    pending.batchId,
    space.id,
    unreadable.tries,
    MAX_UNREADABLE_COLLECTIONS,
    detail,
    { cause: unreadable.error },
  );
}

/**
 * The sessions a run consolidates, by stage: collecting, only the batch's files; excluding (a batch pending),
 * every file but those (`excluded` says which were left out); otherwise all.
 */
export function batchScan(
  scan: ScanResult,
  stage: BatchStage | undefined,
): ScanResult & { readonly excluded: readonly ScanEntry[] } {
  if (stage === undefined || stage.kind === 'submit') return { ...scan, excluded: [] };
  const files = filesOfBatch(stage.pending);
  const inBatch = (entry: ScanEntry): boolean => files.has(entry.file);
  if (stage.kind === 'collect') return { ...scan, entries: scan.entries.filter(inBatch), excluded: [] };
  return {
    ...scan,
    entries: scan.entries.filter((entry) => !inBatch(entry)),
    excluded: scan.entries.filter((entry) => inBatch(entry) && entry.status === 'settled'),
  };
}

/** The sessions a synchronous run left to the pending batch, for its summary and status. */
export function batchPendingSessions(
  pending: BatchInFlight,
  excluded: readonly ScanEntry[],
): WaitingSession[] {
  return excluded.map((entry) => ({
    sessionId: entry.sessionId ?? entry.file,
    reason: 'batch-pending' as const,
    detail: `in message batch ${pending.batchId} (submitted ${pending.submittedAt}); the run that collects it consolidates it`,
  }));
}

/** The summary fields of a run that gave a batch up: nothing written, every one of its sessions waits. */
export function batchFailure(
  stage: Extract<BatchStage, { kind: 'collect' }>,
  entries: readonly ScanEntry[],
): Pick<RunSummary, 'reason' | 'unconsolidated' | 'batch'> {
  const reason = `${stage.failed ?? 'the batch failed'}; nothing written, its sessions wait for the next run, which sends them again`;
  return {
    reason,
    unconsolidated: entries
      .filter((entry) => entry.status === 'settled')
      .map((entry) => ({
        sessionId: entry.sessionId ?? entry.file,
        reason: 'batch-failed' as const,
        detail: reason,
      })),
    batch: {
      id: stage.pending.batchId,
      submittedAt: stage.pending.submittedAt,
      requests: stage.pending.requests.length,
      batchedCalls: 0,
      outcome: 'failed',
    },
  };
}

/** The fraction of list price a batch is billed at for the config's model (0.5 when the price is unknown). */
export function batchFactorOf(config: Config): number {
  return priceFor(config.model.name, config.model.price)?.batchFactor ?? 0.5;
}

/** The run record's account of a collected batch. */
export function batchRecord(
  pending: BatchInFlight,
  batched: BatchedCalls,
  outcome: BatchRecord['outcome'],
  priceFactor: number,
): BatchRecord {
  return {
    id: pending.batchId,
    submittedAt: pending.submittedAt,
    requests: pending.requests.length,
    batchedCalls: batched.calls,
    ...(batched.costUsd === undefined ? {} : { costUsd: roundUsd(batched.costUsd) }),
    ...(batched.listCostUsd === undefined ? {} : { listCostUsd: roundUsd(batched.listCostUsd) }),
    priceFactor,
    outcome,
  };
}
