import type { Space } from '../config/schema.js';
import type { BudgetWait } from './budget.js';
import type { TokenUsage } from './usage.js';

/** What caused a run. */
export type RunTrigger = 'schedule' | 'manual' | 'api';

export interface RunRequest {
  /** Skip the time and session-count gates (never the lock). */
  readonly force: boolean;
  /** Compute and return the diff; write nothing. */
  readonly dryRun: boolean;
  readonly trigger: RunTrigger;
  /** BullMQ job id when the run comes from the queue, for the run record. */
  readonly jobId?: string | undefined;
  /**
   * Send the run's independent calls as a message batch (half price, results within 24 hours) whatever
   * `model.batch` says (`dreamd consolidate --batch`); false: never. Default: `model.batch` decides.
   */
  readonly batch?: boolean | undefined;
}

/**
 * Why a session that was due is not consolidated (in whole or in part) after a run:
 * - `lock-lost`: the run lost its lock before its commit and wrote nothing;
 * - `output-limit`: the answer for its messages passed `model.maxOutputTokens` even for a single message;
 * - `refusal`: the model refused to answer for its messages, on every attempt;
 * - `answer-dropped`: the answer for its messages was dropped unread (longer than `limits.maxAnswerChars`);
 * - `answer-fact-limit`: the answer for its messages held more facts than `limits.maxFactsPerAnswer` even for a
 *   single message (a longer batch is split and asked again instead);
 * - `answer-invalid`: the answer held facts, none of them valid (an unknown type, a missing field, too long);
 * - `session-fact-limit`: its facts this run reached `limits.maxFactsPerSession`; the rest is read next run;
 * - `monthly-budget`: the space spent its `limits.monthlyBudgetUsd`; runs wait for the next month;
 * - `call-budget`: the run spent `limits.maxCallsPerRun` before reaching it (or the rest of it);
 * - `batch-pending`: a part of it is in a message batch not collected yet; the run that collects it goes on;
 * - `batch-failed`: its message batch expired (24 hours), was canceled or failed; the next run sends it again.
 */
export const WAIT_REASONS = [
  'lock-lost',
  'output-limit',
  'refusal',
  'answer-dropped',
  'answer-fact-limit',
  'answer-invalid',
  'session-fact-limit',
  'monthly-budget',
  'call-budget',
  'batch-pending',
  'batch-failed',
] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/** A session a run left waiting, and why. */
export interface WaitingSession {
  readonly sessionId: string;
  readonly reason: WaitReason;
  /** What to do, or what happened, in words. */
  readonly detail: string;
}

/**
 * Why a fact of a model answer was dropped before reconcile (the rest of the answer is kept). Each is an error
 * of the run (counted in its summary and in `status`, exit code 3): nothing is dropped quietly.
 * - `schema`: the fact does not match the fact schema (an unknown type, a missing field);
 * - `fact-too-large`: longer than `limits.maxFactChars`;
 * - `answer-fact-limit`, `session-fact-limit`: kept for run records written before these limits made the
 *   sessions wait instead (an answer past `limits.maxFactsPerAnswer` is split and asked again; a session past
 *   `limits.maxFactsPerSession` continues in the next run): no run counts them now.
 */
export const FACT_DROP_REASONS = [
  'schema',
  'fact-too-large',
  'answer-fact-limit',
  'session-fact-limit',
] as const;
export type FactDropReason = (typeof FACT_DROP_REASONS)[number];

/**
 * What the screen saw in a fact it held back (quarantined) instead of writing to memory:
 * - `secret`: a secret, or the marker of one the digest redacted;
 * - `instruction`: an instruction to an AI or to the memory system (whole, or split over messages or facts);
 * - `assistant`, `tool`, `sub-agent`: a rule or preference whose only evidence is the assistant's own words, a
 *   tool's result, or a sub-agent's report: text the agent read or wrote, not the user;
 * - `read`: the same, where the model's own label said so (the digest could not tell which text);
 * - `other`: a reason none of these (an entry of the quarantine file a person wrote).
 */
export const HELD_BACK_KINDS = [
  'secret',
  'instruction',
  'assistant',
  'tool',
  'sub-agent',
  'read',
  'other',
] as const;
export type HeldBackKind = (typeof HELD_BACK_KINDS)[number];

/** How a person reads each kind: what the screen saw. */
export const HELD_BACK_LABELS = {
  secret: 'a secret',
  instruction: 'an instruction to an AI',
  assistant: "the assistant's words",
  tool: 'a tool result',
  'sub-agent': "a sub-agent's report",
  read: 'text the agent read',
  other: 'another reason',
} as const satisfies Record<HeldBackKind, string>;

export type RunPhase = 'orient' | 'gather' | 'extract' | 'reconcile' | 'write';

export interface RunProgress {
  readonly phase: RunPhase;
  /** Units done and total in this phase (sessions for gather, calls for extract, files for write). */
  readonly done: number;
  readonly total: number;
  readonly message?: string;
}

export interface RunSummary {
  readonly runId: string;
  readonly spaceId: string;
  /**
   * `completed` wrote memory; `skipped` found a gate closed (see `reason`); `dry-run` wrote nothing;
   * `lock-lost`: the run's lock was taken over while it worked (its heartbeat stopped longer than the stale
   * time), so it discarded its plan and wrote nothing (`reason` says who holds the lock); `sessions` are the
   * ones it would have consolidated, still pending.
   */
  readonly status: 'completed' | 'skipped' | 'dry-run' | 'lock-lost' | 'proposed';
  readonly reason: string | undefined;
  /** Session ids consolidated (or that would be, for a dry run). */
  readonly sessions: readonly string[];
  readonly added: number;
  readonly updated: number;
  readonly superseded: number;
  readonly quarantined: number;
  /** The facts of `quarantined` by what the screen saw in them; absent: none held back (or a run before it). */
  readonly heldBack?: Readonly<Partial<Record<HeldBackKind, number>>> | undefined;
  /** Active facts after the run that agents have read (counted from transcripts), and those never read. */
  readonly factsRead?: { readonly used: number; readonly neverUsed: number };
  /** Candidate facts not kept because the project's CLAUDE.md or AGENTS.md already states them. */
  readonly alreadyInProjectFiles?: number;
  readonly calls: number;
  /** Model requests retried after a fault or bad output, summed over the calls (0 when every call went through first time). */
  readonly retries: number;
  readonly usage: TokenUsage;
  /**
   * Output tokens of each answered extraction call (thinking included, which `model.effort` governs), in the
   * order the answers came; absent for a run without a call.
   */
  readonly outputTokensPerCall?: readonly number[] | undefined;
  /**
   * `calls` by kind: extraction, the update check alone (`update-check.ts`), curation; `updateCheckCarried`: of
   * the curation calls, those that carried the update check too (absent: none). Absent: no call.
   */
  readonly callKinds?:
    | {
        readonly extraction: number;
        readonly updateCheck: number;
        readonly curation: number;
        readonly updateCheckCarried?: number | undefined;
      }
    | undefined;
  /**
   * Extraction answers thrown away unread (over `limits.maxFactsPerAnswer` or the output limit) and asked again
   * in halves: paid for twice. Absent: none.
   */
  readonly answersAskedAgain?: number | undefined;
  /** Facts per user line the run's answers carried, when one came near the answer limit (else absent). */
  readonly factsPerUserLine?: number | undefined;
  readonly model: string;
  /**
   * USD the run's model calls cost, from the price table (`cost/prices.ts`) or `model.price`; undefined when
   * the model has no known price. 0 for a run without a call.
   */
  readonly costUsd?: number | undefined;
  /** Set on a skipped run that waits for something other than the gates (the monthly budget). */
  readonly waiting?: BudgetWait | undefined;
  readonly durationMs: number;
  /** Unified diff of the memory files (always for dry runs; also kept in history). */
  readonly diff: string;
  /** Files reported and set aside, with reasons. */
  readonly problems: readonly {
    readonly file: string;
    readonly reason: string;
    /**
     * `session`: a transcript set aside (it waits, nothing of it was consolidated); `memory`: something of the
     * memory folder dreamd reports and works around (a file it cannot write, an index line too long). Runs
     * recorded before this field have neither.
     */
    readonly kind?: 'session' | 'memory' | undefined;
  }[];
  /**
   * What happened besides plain calls: a session consolidated in part (`session X part 2 of ~N`), sessions
   * waiting for the call budget, answers that hit the output limit and were split.
   */
  readonly notes?: readonly string[] | undefined;
  /**
   * Sessions that were due but wait after this run, whole or their rest, with the reason; absent or empty:
   * none. `dreamd consolidate` exits 3 when a run leaves any.
   */
  readonly unconsolidated?: readonly WaitingSession[] | undefined;
  /** Facts of the model's answers dropped before reconcile, by reason; absent: none. */
  readonly factsDropped?: Readonly<Partial<Record<FactDropReason, number>>> | undefined;
  /** The message batch this run collected (or gave up); absent: every call of the run went synchronously. */
  readonly batch?: BatchRecord | undefined;
  /** Facts that left the active files for `.dreamd/archive.json` in this run (superseded or merged); absent: none. */
  readonly archived?: number | undefined;
  /**
   * The curation phase (`consolidation/curation/curate.ts`); absent: no type passed its budget, no call was made. Its
   * calls, tokens and cost are also in `calls`, `usage` and `costUsd`.
   */
  readonly curation?: CurationSummary | undefined;
  /** What a person decided on a proposal: on the record of an accept or a reject; absent on other runs. */
  readonly decision?: ProposalDecision | undefined;
}

/** A person's decision on a proposal (approval mode), kept on the run record it made. */
export interface ProposalDecision {
  /** Run id of the proposal decided on (an accept's record has the same id; a reject's has its own). */
  readonly proposal: string;
  readonly action: 'accept' | 'reject';
  /** The changes accepted, or rejected, by fact id and title. */
  readonly decided: readonly DecidedChange[];
  /** An accept: the changes left out, remembered as rejected. A reject: the changes still awaiting a decision. */
  readonly rest: readonly DecidedChange[];
}

/** One change of a proposal as a decision names it. */
export interface DecidedChange {
  readonly id: string;
  readonly title: string;
}

/** What the curation phase of a run did and cost. */
export interface CurationSummary {
  /** Types curated and why: `facts` or `bytes` (over budget), `duplicates` (facts saying the same thing). */
  readonly types: readonly { readonly type: string; readonly why: readonly string[] }[];
  readonly calls: number;
  readonly usage: TokenUsage;
  /** Absent (or undefined) when the model has no known price. */
  readonly costUsd?: number | undefined;
  /** Facts written by merging others, and the facts they replaced (moved to the archive). */
  readonly results: number;
  readonly merged: number;
  /** Results the code refused, each with its reason (their facts stay as they are). */
  readonly refused: readonly { readonly type: string; readonly title: string; readonly reason: string }[];
}

/**
 * A run's message batch: which it was, when it went, how many of the run's calls it answered and what they
 * cost at the batch price and at list price (`costUsd` of the run includes the batch price). Calls the run
 * made synchronously (a session's later parts, a split, a request the batch did not answer) are the rest of
 * `calls`, at list price.
 */
export interface BatchRecord {
  readonly id: string;
  readonly submittedAt: string;
  /** Requests the batch carried, and how many of them gave an answer the run used. */
  readonly requests: number;
  readonly batchedCalls: number;
  /** USD of the batched calls at the batch price, and what they would have cost at list price. */
  readonly costUsd?: number | undefined;
  readonly listCostUsd?: number | undefined;
  /** Fraction of list price the batch was billed at (0.5). */
  readonly priceFactor?: number | undefined;
  /** `collected`: its answers were used; `failed`: it expired, was canceled or failed, and its sessions wait. */
  readonly outcome: 'collected' | 'failed';
}

/** Whether a run ended without consolidating something it was due to: lost its lock, or left sessions waiting. */
export function leftSessionsWaiting(
  summary: Pick<RunSummary, 'status' | 'unconsolidated' | 'factsDropped'>,
): boolean {
  const dropped = Object.values(summary.factsDropped ?? {}).some((count) => count > 0);
  return summary.status === 'lock-lost' || (summary.unconsolidated?.length ?? 0) > 0 || dropped;
}

export interface RunOptions {
  readonly onProgress?: (progress: RunProgress) => void;
  readonly signal?: AbortSignal;
}

/** One consolidation run for one space: the function the CLI and the BullMQ worker call. */
export type ConsolidateFunction = (
  space: Space,
  request: RunRequest,
  options?: RunOptions,
) => Promise<RunSummary>;

/** The reason a run of an approval space gives while its proposal waits. */
export function awaitingDecision(runId: string, spaceId: string): string {
  return (
    `proposal ${runId} awaits a decision: see it with \`dreamd proposals ${spaceId}\`, then ` +
    `\`dreamd accept ${runId}\` or \`dreamd reject ${runId}\` (each takes --only <fact ids>)`
  );
}
