/**
 * Gather: the new messages of a space's settled sessions, digested and packed into as few model calls as the
 * input and output token budgets allow. The run's call budget (`limits.maxCallsPerRun`) is spent by
 * `extractFacts`, which sends batches in order until it runs out: what was not sent waits for the next run,
 * a session split over several calls part by part (`settleProgress`).
 */
import { collectReads, type SessionReads } from '../../space/fact-use.js';
import type { LimitsConfig } from '../../config/schema.js';
import {
  CHARS_PER_TOKEN,
  digestSession,
  planBatches,
  type Batch,
  type SessionDigest,
} from '../../digest/index.js';
import type { LedgerLookup } from '../../memory/types.js';
import { readSettledSessions, type ReadSessionRecord, type ScanResult } from '../../transcripts/index.js';
import type { RunProgress } from '../../core/run.js';
import type { KeptOutMark } from '../../core/kept-out.js';
import { keptOutBySession } from './keep-out.js';
import { MIN_DIGEST_SHARE, OUTPUT_BUDGET_SHARE, READ_CHARS_PER_DIGEST_CHAR } from './tunables.js';

export interface Gathered {
  /** Batches in the order to send them, each with the ids of the sessions it carries. */
  readonly batches: readonly { readonly batch: Batch; readonly sessionIds: readonly string[] }[];
  /** Sessions consolidated by this run (ids, in reading order). */
  readonly sessions: readonly string[];
  /** Files read this run that the ledger records once memory is on disk (deferred ones excluded). */
  readonly records: readonly ReadSessionRecord[];
  /** Date (YYYY-MM-DD) each session started, to date a fact the model left undated. */
  readonly sessionDates: ReadonlyMap<string, string>;
  /** When each session started (ISO timestamp): a session after a fact was saved may teach it again. */
  readonly sessionStarts?: ReadonlyMap<string, string>;
  /** Sessions past `limits.maxCallsPerRun`: they wait, whole, for the next run (see `settleProgress`). */
  readonly deferred: ReadonlySet<string>;
  /**
   * Sessions whose reading stopped at the run's read budget (see `readBudget`): the first message not read.
   * Settled as if that message had not been sent.
   */
  readonly keptUntil: ReadonlyMap<string, number>;
  /** Sessions partly consolidated by this run (see `settleProgress`); empty before extraction. */
  readonly progress: ReadonlyMap<string, SessionProgress>;
  /** Files reported and set aside. */
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
  /** What the sessions' new messages read of the memory folder (agents' reads of memory files and facts). */
  readonly reads: readonly SessionReads[];
  /** The working directories the sessions name (Claude Code's `cwd`), for the project's instruction files. */
  readonly workingDirectories: readonly string[];
  /**
   * Sessions read and kept out by what they hold (the person's marker, a web or MCP tool): none of their
   * messages reached a digest; the run marks them so later scans pass them by. Absent: none.
   */
  readonly keptOut?: readonly {
    readonly sessionId: string;
    readonly file: string;
    readonly mark: KeptOutMark;
  }[];
}

/**
 * Digest tokens one call may carry: the call's budget less what its memory list may take (never under a
 * quarter of the budget, {@link MIN_DIGEST_SHARE}, so a memory budget set too high cannot starve the digest).
 */
export function digestBudget(
  limits: Pick<LimitsConfig, 'digestTokensPerCall' | 'memoryTokensPerCall'>,
): number {
  return Math.max(
    Math.ceil(limits.digestTokensPerCall * MIN_DIGEST_SHARE),
    limits.digestTokensPerCall - limits.memoryTokensPerCall,
  );
}

/**
 * Characters of messages a run reads (over all its sessions): what its calls (`limits.maxCallsPerRun`, each
 * carrying `digestBudget` tokens) can carry, times `READ_CHARS_PER_DIGEST_CHAR`. What is past it is read by
 * the next run, so a run's memory follows its budget, not the size of the transcripts (a 50 MB session is
 * read a part at a time, each run from where the last one stopped).
 */
export function readBudget(
  limits: Pick<LimitsConfig, 'digestTokensPerCall' | 'memoryTokensPerCall' | 'maxCallsPerRun'>,
): number {
  return limits.maxCallsPerRun * digestBudget(limits) * CHARS_PER_TOKEN * READ_CHARS_PER_DIGEST_CHAR;
}

/** How far a session bigger than one run got (recorded in its ledger entry). */
export interface SessionProgress {
  /** The ledger's next `messageCount`: the first message not sent yet. */
  readonly nextMessage: number;
  /** Messages in the whole file. */
  readonly totalMessages: number;
  /** Which run of this session this was, from 1, and about how many it takes in all. */
  readonly part: number;
  readonly parts: number;
}

export async function gatherSessions(
  scan: ScanResult,
  options: {
    ledger: LedgerLookup;
    limits: LimitsConfig;
    /** The space's memory folder: reads of its files in the transcripts are counted (fact-use). */
    memoryDir: string;
    /** `model.maxOutputTokens`: batches are sized so their answers fit it. Omitted: no output budget. */
    maxOutputTokens?: number;
    /** `keepOut.externalContext`: a session that used a web or MCP tool is kept out. Default false. */
    externalContext?: boolean;
    onProgress: (progress: RunProgress) => void;
  },
): Promise<Gathered> {
  const { limits } = options;
  const sessionDates = new Map<string, string>();
  const sessionStarts = new Map<string, string>();
  const digests: SessionDigest[] = [];
  const sessions: string[] = [];
  const reads: SessionReads[] = [];
  const workingDirectories = new Set<string>();
  const keptUntil = new Map<string, number>();
  // Settled files: the most sessions this read can digest (until it is over and the count is known).
  const settled = scan.entries.filter((entry) => entry.status === 'settled').length;
  const read = await readSettledSessions(scan, {
    ledger: options.ledger,
    maxBytes: limits.maxSessionBytes,
    // The reader may drop what the digest never reads of a tool result (it reads a window of 3 × the kept
    // characters, at least 512), keeping a big transcript's memory flat; never less than the reader's default.
    maxToolResultChars: Math.max(2_000, 3 * limits.toolResultChars, 512),
    keepChars: readBudget(limits),
    // Judged on the whole file (the reader looks at every message), before any of it is digested.
    keepOut: (session) => keptOutBySession(session, { externalContext: options.externalContext === true }),
    // Each session is digested as it is read, while the next files are fetched, and only its digest and
    // what the run records of it are kept: a run never holds all the transcripts it read.
    onSession: (session) => {
      sessions.push(session.id);
      sessionDates.set(session.id, session.startedAt.slice(0, 10));
      sessionStarts.set(session.id, session.startedAt);
      reads.push(collectReads(session, options.memoryDir));
      if (session.cwd !== undefined) workingDirectories.add(session.cwd);
      if (session.keptUntil !== undefined) keptUntil.set(session.id, session.keptUntil);
      digests.push(
        digestSession(session, {
          toolResultChars: limits.toolResultChars,
          fromMessage: session.messages[0]?.index ?? 0,
        }),
      );
      options.onProgress({ phase: 'gather', done: digests.length, total: settled });
    },
  });
  options.onProgress({ phase: 'gather', done: digests.length, total: digests.length });
  const planned =
    digests.length > 0
      ? planBatches(digests, {
          tokensPerCall: digestBudget(limits),
          factsPerCall: limits.maxFactsPerAnswer,
          ...(options.maxOutputTokens !== undefined
            ? { outputTokensPerCall: Math.floor(options.maxOutputTokens * OUTPUT_BUDGET_SHARE) }
            : {}),
        })
      : [];
  return {
    batches: planned.map((batch) => ({ batch, sessionIds: batch.sessionIds })),
    sessions,
    reads,
    workingDirectories: [...workingDirectories],
    records: read.records,
    sessionDates,
    sessionStarts,
    keptUntil,
    deferred: new Set(read.unread),
    progress: new Map(),
    problems: read.problems.map((problem) => ({ file: problem.file, reason: problem.message })),
    keptOut: read.keptOut,
  };
}

/**
 * The run's view of its sessions once extraction is over. `firstUnsent` holds, per session, the first message
 * of the first part not sent (call budget spent, or an answer that could not fit). A session with nothing
 * unsent is consolidated; one whose first part was not sent waits, whole, for the next run (deferred); one in
 * between is consolidated up to that message and continues next run (progress). `earlier` is the session's
 * progress from the ledger, to number the parts.
 */
export function settleProgress(
  gathered: Gathered,
  firstUnsent: ReadonlyMap<string, number>,
  earlier: (sessionId: string) => { readonly part: number } | undefined,
  fromMessage: (sessionId: string) => number,
): Gathered {
  const deferred = new Set<string>(gathered.deferred);
  const progress = new Map<string, SessionProgress>();
  const records = [];
  for (const record of gathered.records) {
    const unsent = firstUnsent.get(record.sessionId);
    const unread = gathered.keptUntil.get(record.sessionId);
    const next = unsent === undefined ? unread : unread === undefined ? unsent : Math.min(unsent, unread);
    if (next === undefined || record.newMessages === 0) {
      records.push(record);
      continue;
    }
    const from = fromMessage(record.sessionId);
    if (next <= from) {
      deferred.add(record.sessionId);
      continue;
    }
    const part = (earlier(record.sessionId)?.part ?? 0) + 1;
    const consumed = next - from;
    const remaining = Math.max(0, record.messageCount - next);
    progress.set(record.sessionId, {
      nextMessage: next,
      totalMessages: record.messageCount,
      part,
      parts: part + Math.ceil(remaining / consumed),
    });
    records.push({ ...record, messageCount: next });
  }
  return {
    ...gathered,
    sessions: gathered.sessions.filter((id) => !deferred.has(id)),
    records,
    deferred,
    progress,
  };
}
