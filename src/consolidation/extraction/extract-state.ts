/**
 * One extraction's state, shared by its calls: what it was asked (`ExtractOptions`), the batches still queued,
 * the facts read so far and what each call was shown, the sessions that wait, and the account of its calls.
 */
import type { Batch } from '../../digest/index.js';
import { createAnswerYield, expectedOverLimit, type AnswerYield } from './answer-yield.js';
import type { ModelProvider } from '../../model/types.js';
import type { RunProgress } from '../../core/run.js';
import { createAnswerReader, type AnswerLimits, type AnswerReader } from './answer-reader.js';
import type { ExtractedFact, MemoryListEntry } from './extraction.js';
import { extractionRequests, runMemoryList, type PreparedAnswer } from './extraction-request.js';
import { createTally, type CostOf, type ExtractionTally } from './extract-tally.js';
import type { Gathered } from '../gather/gather.js';
import type { MemoryList, MemoryListFact } from './memory-list.js';
import type { ShownToCall } from './replaces.js';
import { createUnsentState, type UnsentState } from './unsent-sessions.js';
import { PROBE_FIRST_SHARE } from './tunables.js';

/** What `extractFacts` is asked: the model, the memory to show, the limits and budgets of the run. */
export interface ExtractOptions {
  model: () => ModelProvider;
  /** Active facts in ranking order (`rankedMemoryList`), that each call's list is chosen from. */
  index: readonly MemoryListFact[];
  /** Most tokens of memory list one call carries (`limits.memoryTokensPerCall`). */
  memoryTokensPerCall: number;
  today: string;
  maxOutputTokens: number;
  /** USD of one call's usage (`batched`: at the batch price); undefined when the model has no known price. */
  costOf?: CostOf | undefined;
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
}

/** One extraction in progress. */
export interface ExtractionRun {
  readonly gathered: Gathered;
  readonly options: ExtractOptions;
  /** Facts per user line this run's answers carried, to split a batch before it is sent (`answer-yield.ts`). */
  readonly answerYield: AnswerYield;
  /**
   * The first call goes alone, cut to what a dense dialogue's answer fits, and the rest wait for its answer's
   * yield: its batch reaches half the answer limit at the default yield (a dialogue of many user lines). See
   * `extract-queue.ts`.
   */
  readonly probeFirst: boolean;

  /** `options.maxCalls`, or no limit. */
  readonly maxCalls: number;
  readonly reader: AnswerReader;
  readonly memoryList: MemoryList;
  readonly requestFor: ReturnType<typeof extractionRequests>;
  /** Batches not started yet, in the order to send them (the halves of a split batch go in its place). */
  readonly queue: Batch[];
  readonly unsent: UnsentState;
  /** Facts read so far, in the order their answers came. */
  readonly candidates: ExtractedFact[];
  /** The run's facts as later calls' memory lists show them (by `runFactId`). */
  readonly runEntries: MemoryListEntry[];
  /** Per candidate: the run's facts its call was shown (by `runFactId`), and which call it came from. */
  readonly shown: ShownToCall[];
  /** Per candidate: every id its call's memory list showed (memory's and the run's), for the update check. */
  readonly listedTo: ReadonlySet<string>[];
  /** Problems to report with the session's file. */
  readonly problems: { sessionId: string; reason: string }[];
  readonly tally: ExtractionTally;
  /** Aborted by the first failure that is not an answer's (or the run's signal): the calls in flight stop. */
  readonly stop: AbortController;
}

/** An extraction of the gathered batches before its first call. */
export function createExtractionRun(gathered: Gathered, options: ExtractOptions): ExtractionRun {
  const memoryList = runMemoryList(options.index, options.memoryTokensPerCall, gathered.batches.length);
  const answerYield = createAnswerYield();
  const first = gathered.batches[0]?.batch;
  return {
    gathered,
    options,
    answerYield,
    // A message batch's answers are in (`prepared`): its requests went as planned, at half price.
    probeFirst:
      first !== undefined &&
      options.prepared === undefined &&
      expectedOverLimit(answerYield, first, options.limits.maxFactsPerAnswer * PROBE_FIRST_SHARE),
    maxCalls: options.maxCalls ?? Number.POSITIVE_INFINITY,
    reader: createAnswerReader(options.limits),
    memoryList,
    requestFor: extractionRequests(memoryList, options),
    queue: gathered.batches.map((entry) => entry.batch),
    unsent: createUnsentState(),
    candidates: [],
    runEntries: [],
    shown: [],
    listedTo: [],
    problems: [],
    tally: createTally(),
    stop: new AbortController(),
  };
}
