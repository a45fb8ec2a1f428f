/**
 * What `dreamd status` reports for a space without a daemon: the gates as the scheduler would evaluate them,
 * the sessions by status, the last run and the lock holder. A daemon-aware caller adds queue counts through
 * `queueCounts`; without it the `queue` field is absent.
 */
import { join } from 'node:path';
import type { RunSummary } from '../core/run.js';
import type { Config, Space } from '../config/schema.js';
import { describeBudgetWait, spaceBudget } from '../cost/index.js';
import type { HeldBackKind, WaitingSession } from '../core/run.js';
import { countHeldBack } from '../consolidation/summary/held-back.js';
import { inspectSpaceDetailed } from '../consolidation/inspect.js';
import { listProposalViews } from '../consolidation/approval/proposal.js';
import { evaluateGates } from '../core/gates.js';
import { errorMessage } from '../errors.js';
import { mostTaughtAgain, type TaughtAgainRule } from '../memory/taught-again.js';
import {
  MAX_UNREADABLE_COLLECTIONS,
  listRuns,
  loadMemory,
  parseQuarantine,
  QUARANTINE_FILE,
  readTextIfExists,
  memoryWriteProblem,
  readLedger,
  readBatchInFlight,
  readWaitingSessions,
  sessionsOfBatch,
  recoverSpace,
  sessionsInProgress,
} from '../space/index.js';
import type { RunRecord } from '../space/run-history.js';
import { countByStatus } from '../transcripts/index.js';
import { describeBatchInFlight } from '../consolidation/batch/batch.js';
import { providerKind } from '../model/providers.js';

/** What `model.batch` means for this config's provider. */
export function batchModeText(config: Config): string {
  if (config.model.batch === 'never') return 'never: every call goes synchronously';
  if (!providerKind(config.model.provider).batches) {
    return `${config.model.batch}, but synchronous: the ${config.model.provider} provider has no batch API in dreamd`;
  }
  return config.model.batch === 'always'
    ? 'always: every run sends its independent calls as a message batch (half price)'
    : 'scheduled: scheduled runs send their independent calls as a message batch (half price); manual runs do not (--batch does)';
}

async function batchInFlightStatus(
  space: Space,
  now: Date,
  onError: (message: string) => void,
): Promise<SpaceStatus['batch']['pending']> {
  let pending;
  try {
    pending = await readBatchInFlight(space.memoryDir);
  } catch (caught) {
    onError(errorMessage(caught));
    return null;
  }
  if (pending === undefined) return null;
  return {
    id: pending.batchId,
    submittedAt: pending.submittedAt,
    ageMs: Math.max(0, now.getTime() - Date.parse(pending.submittedAt)),
    expiresAt: pending.expiresAt,
    requests: pending.requests.length,
    sessions: sessionsOfBatch(pending).size,
    unreadable:
      pending.unreadable === undefined
        ? null
        : { ...pending.unreadable, maxTries: MAX_UNREADABLE_COLLECTIONS },
    description: describeBatchInFlight(pending, now, space.id),
  };
}

/** What `status` says of a space's latest run. */
function lastRunOf(latest: RunRecord): NonNullable<SpaceStatus['lastRun']> {
  return {
    runId: latest.runId,
    kind: latest.kind,
    status: latest.summary.status,
    committedAt: latest.committedAt,
    calls: latest.summary.calls,
    ...(latest.summary.callKinds === undefined ? {} : { callKinds: latest.summary.callKinds }),
    ...(latest.summary.answersAskedAgain === undefined
      ? {}
      : { answersAskedAgain: latest.summary.answersAskedAgain }),
    ...(latest.summary.factsDropped !== undefined &&
    Object.values(latest.summary.factsDropped).some((count) => count > 0)
      ? { factsDropped: latest.summary.factsDropped }
      : {}),
  };
}

/** Jobs of one space in the daemon's queue. */
export interface QueueCounts {
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
  /** The space's recent failed jobs, newest first, with the reason. */
  readonly recentFailures?: readonly {
    readonly jobId: string;
    readonly failedReason: string;
    readonly finishedAt?: string | undefined;
  }[];
}

export interface SpaceStatus {
  readonly space: string;
  readonly sessionsDir: string;
  readonly memoryDir: string;
  readonly format: Space['format'];
  /** Every folder the space reads, with its format, when it has several sources (`sources`, discovery). */
  readonly sources?: readonly { readonly format: Space['format']; readonly sessionsDir: string }[];
  /** The repository a discovered space serves. */
  readonly repository?: string;
  /** Would a scheduled run start now, and if not, why. */
  readonly gates: { readonly open: boolean; readonly reasons: readonly string[] };
  readonly sessions: {
    readonly settledNew: number;
    readonly live: number;
    readonly consolidated: number;
    readonly broken: number;
    /**
     * Sessions kept out of memory (`dreamd sessions exclude`, `#dreamd:ignore` typed in them, or a web or MCP
     * tool with `keepOut.externalContext`): never read, never waiting. `dreamd sessions list` says why.
     */
    readonly keptOut: number;
  };
  readonly broken: readonly { readonly file: string; readonly reason: string }[];
  /** The latest run of any kind, and when the last consolidation completed (the time gate's reference). */
  readonly lastRun: {
    readonly runId: string;
    readonly kind: string;
    readonly status: string;
    readonly committedAt: string;
    /** Facts of the model's answers that run dropped as invalid, by reason (an error: absent when none). */
    readonly factsDropped?: Readonly<Record<string, number>> | undefined;
    /** Its model calls, and of them by kind (absent: no call, or an older record). */
    readonly calls: number;
    readonly callKinds?: RunSummary['callKinds'];
    /** Its extraction answers thrown away and asked again in halves (absent: none). */
    readonly answersAskedAgain?: number | undefined;
  } | null;
  readonly lastSuccessfulRunAt: string | null;
  readonly lock: {
    readonly owner: string;
    readonly pid: number;
    readonly host: string;
    readonly startedAt: string;
  } | null;
  /**
   * Claude Code's `.consolidate-lock` while a live process holds it (PID, since, age in ms); null when it is
   * free or absent. While it is held no run, rollback or forget writes this memory.
   */
  readonly claudeCodeLock: {
    readonly pid: number;
    readonly since: string;
    readonly ageMs: number;
  } | null;
  /** Memory files reported (path, reason and fix): files dreamd cannot write, facts held back, index room. */
  readonly memory: readonly { readonly file: string; readonly reason: string }[];
  /** Set when the space could not be inspected; its gates stay closed. */
  readonly error: string | null;
  /** Why memory cannot be written (a read-only folder, no permission), with the fix; null when it can. */
  readonly storage: string | null;
  /** What the recovery before reading did: `finished an interrupted commit`, or null when there was none. */
  readonly recovery: string | null;
  /** Sessions bigger than one run, consolidated part by part: `session X part 2 of ~5 (…)`. */
  readonly inProgress: readonly string[];
  /**
   * Sessions that were due and wait, with why: those the last run left (`.dreamd/waiting.json`: cut by the
   * call budget, an answer dropped or refused, the output limit) that no run has consolidated since, and,
   * while the monthly budget is spent, every settled new session. A run that lost its lock leaves no list:
   * `dreamd consolidate` and the metrics report it.
   */
  readonly waiting: readonly WaitingSession[];
  /** Approval mode: proposals awaiting a decision (run id, when made, changes); runs of the space wait for them. */
  readonly proposals: readonly {
    readonly runId: string;
    readonly createdAt: string;
    readonly changes: number;
  }[];
  /**
   * Batch mode: which runs send their independent calls as a message batch (`model.batch`; a provider without
   * a batch API calls synchronously whatever it says), and the batch a run submitted and has not collected
   * (`.dreamd/batch.json`), with its age; `pending` is null when there is none.
   */
  readonly batch: {
    readonly mode: string;
    readonly pending: {
      readonly id: string;
      readonly submittedAt: string;
      readonly ageMs: number;
      readonly expiresAt: string;
      readonly requests: number;
      readonly sessions: number;
      /** Collections that could not read its results, of the most before it is given up; null when none. */
      readonly unreadable: {
        readonly tries: number;
        readonly maxTries: number;
        readonly lastAt: string;
        readonly message: string;
      } | null;
      readonly description: string;
    } | null;
  };
  /**
   * Facts held back in `.dreamd/quarantine.md` for a person to review, in all and by what the screen saw in
   * them (`HELD_BACK_KINDS`); 0 and empty when there is no quarantine file.
   */
  readonly heldBack: {
    readonly total: number;
    readonly byKind: Readonly<Partial<Record<HeldBackKind, number>>>;
  };
  /**
   * Rules your agents keep forgetting: the active facts people taught again most after they were saved (at
   * most 5, most times first, rules before other types on a tie); empty when none was taught again.
   */
  readonly taughtAgain: readonly TaughtAgainRule[];
  /** Present when a daemon's queue was asked. */
  readonly queue?: QueueCounts;
}

export interface SpaceStatusOptions {
  readonly config: Config;
  readonly now?: () => Date;
  /** The daemon's queue counts for a space; omitted when there is no daemon to ask. */
  readonly queueCounts?: (spaceId: string) => Promise<QueueCounts>;
}

/** What the recovery before reading did, in words, or null when there was nothing to recover. */
function recoveryText(recovered: Awaited<ReturnType<typeof recoverSpace>>): string | null {
  if (recovered.status === 'busy') return `a commit is being applied by ${recovered.holder}`;
  if (recovered.status !== 'recovered') return null;
  return (
    [
      ...(recovered.finished.length > 0
        ? [`finished the interrupted commit of ${recovered.finished.join(', ')}`]
        : []),
      ...(recovered.claudeCodeLockRestored === undefined
        ? []
        : [
            recovered.claudeCodeLockRestored === null
              ? "removed the .consolidate-lock a killed run of dreamd's had created"
              : `put back the mtime of .consolidate-lock that a killed run of dreamd's had moved (${recovered.claudeCodeLockRestored})`,
          ]),
    ].join('; ') || null
  );
}

/** The latest run and the sessions the last run left waiting that still wait; an unreadable history is an error. */
async function runHistoryOf(
  space: Space,
  ledger: Awaited<ReturnType<typeof readLedger>> | undefined,
  onError: (message: string) => void,
): Promise<{ lastRun: SpaceStatus['lastRun']; waiting: WaitingSession[] }> {
  let lastRun: SpaceStatus['lastRun'] = null;
  let waiting: WaitingSession[] = [];
  try {
    const runs = await listRuns(space.memoryDir);
    const latest = runs.at(-1);
    // What the last run left waiting, still waiting: not in the ledger since, or only in part.
    waiting = ((await readWaitingSessions(space.memoryDir))?.sessions ?? []).filter((entry) => {
      const known = ledger?.sessions[entry.sessionId];
      return known === undefined || known.progress !== undefined;
    });
    if (latest !== undefined) {
      lastRun = lastRunOf(latest);
    }
  } catch (caught) {
    onError(`run history of ${space.memoryDir} cannot be read: ${errorMessage(caught)}`);
  }
  return { lastRun, waiting };
}

/** While the monthly budget is spent, adds every settled new session not listed yet to the waiting ones. */
async function addBudgetWaiting(
  space: Space,
  options: SpaceStatusOptions,
  now: () => Date,
  scan: Awaited<ReturnType<typeof inspectSpaceDetailed>>['scan'],
  waiting: WaitingSession[],
): Promise<void> {
  const budget = await spaceBudget(space.memoryDir, options.config.limits.monthlyBudgetUsd, now()).catch(
    () => undefined,
  );
  if (budget === undefined || budget.waiting === null || scan === undefined) return;
  const detail = describeBudgetWait(budget.waiting);
  const listed = new Set(waiting.map((entry) => entry.sessionId));
  for (const entry of scan.entries) {
    const sessionId = entry.sessionId ?? entry.file;
    if (entry.status === 'settled' && !listed.has(sessionId))
      waiting.push({ sessionId, reason: 'monthly-budget', detail });
  }
}

/** The proposals awaiting a decision, or none (and an error) when they cannot be read. */
async function proposalsOf(
  space: Space,
  onError: (message: string) => void,
): Promise<SpaceStatus['proposals']> {
  return listProposalViews([space]).then(
    (listed) =>
      listed.proposals.map((view) => ({
        runId: view.runId,
        createdAt: view.createdAt,
        changes: view.changes.length,
      })),
    (caught: unknown) => {
      onError(`proposals of ${space.memoryDir} cannot be read: ${errorMessage(caught)}`);
      return [];
    },
  );
}

/** The memory files' problems and the rules taught again most; an unreadable memory is its one problem. */
async function memoryReportOf(
  space: Space,
): Promise<{ memory: SpaceStatus['memory']; taughtAgain: readonly TaughtAgainRule[] }> {
  return loadMemory(space.memoryDir).then(
    (loaded) => ({ memory: loaded.problems, taughtAgain: mostTaughtAgain(loaded.facts) }),
    (caught: unknown) => ({
      memory: [{ file: space.memoryDir, reason: `cannot be read: ${errorMessage(caught)}` }],
      taughtAgain: [],
    }),
  );
}

/** The reasons of the facts held back in the quarantine file, or none (and an error) when it cannot be read. */
async function heldBackReasons(space: Space, onError: (message: string) => void): Promise<string[]> {
  return readTextIfExists(join(space.memoryDir, QUARANTINE_FILE)).then(
    (text) => parseQuarantine(text).map((entry) => entry.reason),
    (caught: unknown) => {
      onError(`${QUARANTINE_FILE} of ${space.memoryDir} cannot be read: ${errorMessage(caught)}`);
      return [];
    },
  );
}

/** A space's status: recovered first, then inspected, with each part read on its own; the first error is kept. */
export async function spaceStatus(space: Space, options: SpaceStatusOptions): Promise<SpaceStatus> {
  const now = options.now ?? (() => new Date());
  // Recover before reading (a commit a crashed run left half applied), then check the folder can be written.
  const recovered = await recoverSpace(space.memoryDir, {
    staleMs: options.config.limits.lockStaleMinutes * 60_000,
    space: space.id,
    now,
  });
  const storage =
    recovered.status === 'unwritable' ? recovered.message : await memoryWriteProblem(space.memoryDir);
  const recovery = recoveryText(recovered);
  const { inspection, scan } = await inspectSpaceDetailed(space, { config: options.config, now });
  const counts = scan !== undefined ? countByStatus(scan) : undefined;
  const gates = evaluateGates({ inspection, gates: options.config.gates, now: now(), force: false });
  let error = inspection.error ?? null;
  const onError = (message: string): void => {
    error ??= message;
  };
  const ledger = await readLedger(space.memoryDir).catch(() => undefined);
  const { lastRun, waiting } = await runHistoryOf(space, ledger, onError);
  await addBudgetWaiting(space, options, now, scan, waiting);
  const proposals = await proposalsOf(space, onError);
  const { memory, taughtAgain } = await memoryReportOf(space);
  const held = await heldBackReasons(space, onError);
  const batchInFlight = await batchInFlightStatus(space, now(), onError);
  const status: SpaceStatus = {
    space: space.id,
    sessionsDir: space.sessionsDir,
    memoryDir: space.memoryDir,
    format: space.format,
    ...(space.sources === undefined
      ? {}
      : { sources: space.sources.map(({ format, sessionsDir }) => ({ format, sessionsDir })) }),
    ...(space.repository === undefined ? {} : { repository: space.repository }),
    gates: { open: gates.open, reasons: gates.reasons },
    sessions: {
      settledNew: inspection.settledNew,
      live: inspection.live,
      consolidated: counts?.consolidated ?? 0,
      broken: inspection.broken.length,
      keptOut: counts?.['kept-out'] ?? 0,
    },
    broken: inspection.broken,
    lastRun,
    lastSuccessfulRunAt: inspection.lastSuccessfulRunAt ?? null,
    lock: inspection.lock ?? null,
    claudeCodeLock: inspection.claudeCodeLock ?? null,
    memory,
    error,
    storage: storage ?? null,
    recovery,
    inProgress: ledger === undefined ? [] : sessionsInProgress(ledger),
    waiting,
    proposals,
    batch: { mode: batchModeText(options.config), pending: batchInFlight },
    heldBack: { total: held.length, byKind: countHeldBack(held) },
    taughtAgain,
  };
  return options.queueCounts !== undefined
    ? { ...status, queue: await options.queueCounts(space.id) }
    : status;
}
