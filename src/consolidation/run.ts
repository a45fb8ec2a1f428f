/**
 * One consolidation run for one space: gates → orient → gather → extract → reconcile → write.
 *
 * States of a run: `locked` (lock taken, an interrupted earlier run finished or discarded; a dry run takes no
 * lock) → `gated` (closed: skipped, nothing written) → `gathered` (digests built) → `extracted` (model answered
 * for every batch; a model failure ends the run here, nothing written, sessions stay pending) → `reconciled`
 * → `committed` (memory, quarantine, ledger and run record moved into place by one staged transaction) → lock
 * released. The lock's heartbeat runs from `locked` to the end; just before the commit point the run checks
 * that the lock is still its own (the fence): a run that lost it (paused longer than the stale time, taken
 * over) discards its plan and ends `lock-lost`, nothing written, its sessions pending. A retried run is
 * idempotent: sessions the ledger already holds are not read again. The call budget is spent in extraction;
 * a session it cuts is consolidated up to the first message not sent and continues next run (ledger progress).
 */
import { readProjectDocs, shownStatements, splitAlreadyStated } from './project-docs.js';
import { FACT_USE_FILE } from '../space/fact-use.js';
import { rebuildSessionReads } from './fact-use-rebuild.js';
import { hostname } from 'node:os';
import { HistoryConfig, layoutOfSpace, type Config, type Space } from '../config/schema.js';
import { costOfCall, describeBudgetWait, priceFor, roundUsd, spaceBudget } from '../cost/index.js';
import { evaluateGates, waitingLive } from '../core/gates.js';
import { ConfigError, LockLostError, NoBatchApiError } from '../errors.js';
import {
  acquireLock,
  commitMemoryChanges,
  describeProgress,
  createLedgerLookup,
  lastSuccessfulRun,
  loadMemory,
  newRunId,
  nextLedgerContent,
  readForgotten,
  readLedger,
  readRejected,
  readPendingBatch,
  clearPendingBatch,
  recordWaitingSessions,
  recoverMemory,
  type CommitStep,
  type HeartbeatTimer,
  type HeldLock,
} from '../space/index.js';
import { acquireClaudeCodeLockFor, type HeldClaudeCodeLock } from '../space/claude-code-lock.js';
import { createIsRejected } from './rejected-match.js';
import { addUsage, emptyUsage, type ModelProvider, type TokenUsage } from '../model/types.js';
import { countByStatus, scanSessions } from '../transcripts/index.js';
import { extractFacts, promptIndex } from './extract.js';
import { gatherSessions, settleProgress } from './gather.js';
import { pendingProposal, proposeRun } from './proposal.js';
import {
  batchFactorOf,
  batchFailure,
  batchPendingSessions,
  batchRecord,
  batchScan,
  consolidateWithBatches,
  recordUnreadableResults,
  submitExtractionBatch,
  type BatchStage,
} from './batch.js';
import { DEFAULT_CURATION } from './curate.js';
import { curationNotes, curationReview, curationSummary, planAndCurate } from './curate-run.js';
import { countHeldBack } from './held-back.js';
import type {
  ConsolidateFunction,
  RunOptions,
  RunProgress,
  RunRequest,
  RunSummary,
  WaitingSession,
  WaitReason,
} from '../core/run.js';

export { PROMPT_INDEX_FACTS } from './extract.js';

/** Named points of a run where a test may inject a crash (in addition to the commit's own steps). */
export type RunStep =
  'after-orient' | 'after-digest' | 'after-batch-submit' | 'after-extraction' | `commit:${CommitStep}`;

export interface ConsolidatorOptions {
  /**
   * The config, or a function returning the live one: read at the start of every run, so a reload (gates,
   * limits, model settings) reaches the next run. `createDreamd` passes its `getConfig`.
   */
  readonly config: Config | (() => Config);
  /** The model, or a factory called on the first run that needs one (a missing key fails that run only). */
  readonly model: ModelProvider | (() => ModelProvider);
  readonly now?: () => Date;
  /** Lock owner shown in status, e.g. "worker 12345". Default `dreamd <pid>@<host>`. */
  readonly owner?: string;
  /** Schedules the space lock's heartbeat; default `setInterval` (see HeartbeatTimer). */
  readonly lockTimer?: HeartbeatTimer;
  /** Test hook: called at each named step; throw (or kill the process) to simulate a crash there. */
  readonly faultInjection?: (step: RunStep) => void;
}

const DEFAULT_HISTORY = HistoryConfig.parse({});

function summary(fields: Partial<RunSummary> & Pick<RunSummary, 'runId' | 'spaceId' | 'status'>): RunSummary {
  return {
    reason: undefined,
    sessions: [],
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 0,
    retries: 0,
    usage: emptyUsage(),
    model: '',
    durationMs: 0,
    diff: '',
    problems: [],
    ...fields,
  };
}

/** One note per reason: how many sessions wait for it and which (the first few), for the summary's notes. */
export function describeWaiting(unconsolidated: readonly WaitingSession[]): string[] {
  const byReason = new Map<WaitReason, string[]>();
  for (const entry of unconsolidated) {
    const ids = byReason.get(entry.reason) ?? [];
    ids.push(entry.sessionId);
    byReason.set(entry.reason, ids);
  }
  return [...byReason].map(([reason, ids]) => {
    const shown = ids.slice(0, 5).join(', ');
    const more = ids.length > 5 ? ` and ${ids.length - 5} more` : '';
    return `${ids.length} session(s) wait for the next run (${reason}): ${shown}${more}`;
  });
}

/** Creates the function the CLI and the workers call to consolidate one space. */
export function createConsolidator(options: ConsolidatorOptions): ConsolidateFunction {
  const readConfig = typeof options.config === 'function' ? options.config : () => options.config as Config;
  const now = options.now ?? (() => new Date());
  const owner = options.owner ?? `dreamd ${process.pid}@${hostname()}`;
  let model: ModelProvider | undefined = typeof options.model === 'function' ? undefined : options.model;
  const getModel = (): ModelProvider => (model ??= (options.model as () => ModelProvider)());
  const inject = options.faultInjection ?? (() => undefined);
  /** The price of the config's model; a budget on a model with no known price is a ConfigError. */
  const pricing = (config: Config): ((usage: TokenUsage, batched?: boolean) => number) | undefined => {
    const price = priceFor(config.model.name, config.model.price);
    if (price === undefined && config.limits.monthlyBudgetUsd !== undefined) {
      throw new ConfigError(
        `limits.monthlyBudgetUsd is set but model ${config.model.name} has no known price: set model.price ` +
          '(USD per million input and output tokens) in dreamd.config.json',
        'model.price',
      );
    }
    return price === undefined
      ? undefined
      : (usage: TokenUsage, batched?: boolean) => costOfCall(usage, price, { batch: batched === true });
  };
  pricing(readConfig()); // at creation too, so a daemon with such a config stops at start

  return async function consolidate(
    space: Space,
    request: RunRequest,
    runOptions: RunOptions = {},
  ): Promise<RunSummary> {
    return consolidateWithBatches(space, request, runOptions, {
      config: readConfig(),
      model: getModel,
      now,
      run: (stage) => runLocked(space, request, runOptions, stage),
    });
  };

  /** The run under the locks; `stage` says what it does about a message batch (see batch.ts). */
  async function runLocked(
    space: Space,
    request: RunRequest,
    runOptions: RunOptions,
    stage: BatchStage | undefined,
  ): Promise<RunSummary> {
    const config = readConfig();
    const costOf = pricing(config);
    const started = Date.now();
    const runId = newRunId(now());
    const progress = (update: RunProgress): void => runOptions.onProgress?.(update);
    const base = { runId, spaceId: space.id };
    const elapsed = (): number => Date.now() - started;
    /** A run that ran (not a dry run, not one that lost its lock) leaves what it left waiting for status. */
    const ended = async (result: RunSummary): Promise<RunSummary> => {
      if (!request.dryRun && result.status !== 'lock-lost') {
        // Collected (or given up): its facts are committed with this run, or its sessions wait for the next.
        if (stage?.kind === 'collect') await clearPendingBatch(space.memoryDir);
        await recordWaitingSessions(space.memoryDir, {
          runId,
          at: now().toISOString(),
          sessions: result.unconsolidated ?? [],
        });
      }
      return result;
    };

    let lock: HeldLock | undefined;
    // Claude Code's own `.consolidate-lock`, in a claude-code space: taken after dreamd's lock, released
    // before it; busy means a LockBusyError and nothing written (space/claude-code-lock.ts).
    let claudeCodeLock: HeldClaudeCodeLock | undefined;
    if (!request.dryRun) {
      lock = await acquireLock(space.memoryDir, {
        owner: request.jobId !== undefined ? `${owner} job ${request.jobId}` : owner,
        staleMs: config.limits.lockStaleMinutes * 60_000,
        now,
        space: space.id,
        ...(options.lockTimer !== undefined ? { timer: options.lockTimer } : {}),
      });
      claudeCodeLock = await acquireClaudeCodeLockFor(space, { now }).catch(async (error: unknown) => {
        await lock?.release();
        throw error;
      });
      // Only under the lock: a transaction staged by a live holder must not be finished or discarded.
      await recoverMemory(space.memoryDir);
    }
    try {
      if (stage?.kind === 'collect') {
        // Another process may have collected it while this one waited without the locks.
        const still = await readPendingBatch(space.memoryDir);
        if (still?.batchId !== stage.pending.batchId) {
          return summary({
            ...base,
            status: 'skipped',
            reason: `batch ${stage.pending.batchId} was already collected`,
            durationMs: elapsed(),
          });
        }
        if (stage.unreadable !== undefined) {
          throw await recordUnreadableResults(space, still, stage.unreadable, now());
        }
      }
      // Orient: memory as it is now, what has been consolidated, and the gates.
      progress({ phase: 'orient', done: 0, total: 1 });
      const [memory, ledger, forgotten, lastRun, rejected] = await Promise.all([
        loadMemory(space.memoryDir, { layout: layoutOfSpace(space) }),
        readLedger(space.memoryDir),
        readForgotten(space.memoryDir),
        lastSuccessfulRun(space.memoryDir),
        readRejected(space.memoryDir),
      ]);
      // Approval mode: while a proposal that still fits memory awaits a decision, the run waits for it.
      const proposals = space.approve === true ? await pendingProposal(space, memory) : undefined;
      if (proposals?.pending !== undefined) {
        return summary({
          ...base,
          status: 'skipped',
          reason: awaitingDecision(proposals.pending.runId, space.id),
          durationMs: elapsed(),
        });
      }
      const ledgerLookup = createLedgerLookup(ledger);
      const scan = batchScan(
        await scanSessions({
          space,
          ledger: ledgerLookup,
          now: now(),
          quietMinutes: config.gates.quietMinutes,
          maxBytes: config.limits.maxSessionBytes,
        }),
        stage,
      );
      if (stage?.kind === 'collect' && stage.failed !== undefined) {
        return ended(
          summary({
            ...base,
            status: 'skipped',
            ...batchFailure(stage, scan.entries),
            durationMs: elapsed(),
          }),
        );
      }
      const counted = countByStatus(scan);
      const gates = evaluateGates({
        inspection: {
          spaceId: space.id,
          settledNew: counted.settled,
          live: counted.live,
          broken: [],
          lastSuccessfulRunAt: lastRun?.committedAt,
          // A session bigger than one run, started by an earlier run, continues without waiting for the gates.
          continuing: Object.values(ledger.sessions).some((entry) => entry.progress !== undefined),
        },
        gates: config.gates,
        now: now(),
        // A batch being collected was paid for: its sessions go on whatever the gates say now.
        force: request.force || stage?.kind === 'collect',
      });
      if (!gates.open) {
        return summary({
          ...base,
          status: 'skipped',
          reason: gates.reasons.join('; '),
          durationMs: elapsed(),
        });
      }
      if (config.limits.monthlyBudgetUsd !== undefined && stage?.kind !== 'collect') {
        const budget = await spaceBudget(space.memoryDir, config.limits.monthlyBudgetUsd, now());
        if (budget.waiting !== null) {
          const detail = describeBudgetWait(budget.waiting);
          return ended(
            summary({
              ...base,
              status: 'skipped',
              reason: detail,
              waiting: budget.waiting,
              unconsolidated: scan.entries
                .filter((entry) => entry.status === 'settled')
                .map((entry) => ({
                  sessionId: entry.sessionId ?? entry.file,
                  reason: 'monthly-budget' as const,
                  detail,
                })),
              durationMs: elapsed(),
            }),
          );
        }
      }
      progress({ phase: 'orient', done: 1, total: 1 });
      inject('after-orient');

      const planned = await gatherSessions(scan, {
        memoryDir: space.memoryDir,
        ledger: ledgerLookup,
        limits: config.limits,
        maxOutputTokens: config.model.maxOutputTokens,
        onProgress: progress,
      });
      inject('after-digest');

      const today = now().toISOString().slice(0, 10);
      // What the project's CLAUDE.md / AGENTS.md already say: shown as known, and not kept again.
      const projectDocs = await readProjectDocs(planned.workingDirectories);
      // Set when this run wanted a batch and the endpoint has no batch API: it makes ordinary calls instead.
      let noBatchApi: string | undefined;
      if (stage?.kind === 'submit') {
        const submitted = await submitExtractionBatch(planned, {
          memoryDir: space.memoryDir,
          runId,
          model: getModel(),
          index: promptIndex(memory.facts, now()),
          memoryTokensPerCall: config.limits.memoryTokensPerCall,
          today,
          maxOutputTokens: config.model.maxOutputTokens,
          maxAnswerChars: config.limits.maxAnswerChars,
          maxCalls: config.limits.maxCallsPerRun,
          known: shownStatements(projectDocs),
          now: now(),
          signal: runOptions.signal,
        }).catch((error: unknown) => {
          if (!(error instanceof NoBatchApiError)) throw error;
          noBatchApi = error.message;
          return undefined;
        });
        if (submitted !== undefined) {
          inject('after-batch-submit');
          return summary({
            ...base,
            status: 'skipped',
            reason: `submitted ${submitted.batchId} (${submitted.requests.length} request(s)); its results are collected when it ends`,
            durationMs: elapsed(),
          });
        }
      }
      const extracted = await extractFacts(planned, {
        known: shownStatements(projectDocs),
        model: getModel,
        index: promptIndex(memory.facts, now()),
        memoryTokensPerCall: config.limits.memoryTokensPerCall,
        today,
        maxOutputTokens: config.model.maxOutputTokens,
        costOf,
        prepared: stage?.kind === 'collect' ? stage.answers : undefined,
        maxCalls: config.limits.maxCallsPerRun,
        concurrency: config.model.concurrency,
        limits: config.limits,
        signal: runOptions.signal,
        onProgress: progress,
      });
      inject('after-extraction');
      // What was sent is consolidated; a session cut by the call budget continues next run from there.
      const startOf = new Map(scan.entries.map((entry) => [entry.sessionId, entry.fromMessage]));
      const gathered = settleProgress(
        planned,
        extracted.firstUnsent,
        (id) => ledger.sessions[id]?.progress,
        (id) => startOf.get(id) ?? 0,
      );

      progress({ phase: 'reconcile', done: 0, total: 1 });
      // Reads of memory were counted in fact-use.json; without it (deleted, or older memory) the transcripts
      // already consolidated are read once more to count them again.
      const earlierReads = memory.originals.has(FACT_USE_FILE)
        ? []
        : await rebuildSessionReads(space, Object.values(ledger.sessions), config.limits);
      const { kept, stated } = splitAlreadyStated(extracted.candidates, projectDocs);
      // Facts a person rejected from a proposal are not proposed again from the same sessions, in any words.
      const isRejected = createIsRejected(rejected);
      const candidates = kept.filter((candidate) => !isRejected(candidate));
      const writeOptions = {
        memoryDir: space.memoryDir,
        memory,
        candidates,
        forgotten,
        gathered:
          earlierReads.length === 0 ? gathered : { ...gathered, reads: [...earlierReads, ...gathered.reads] },
        runId,
        today,
        now: now(),
        consolidatedAt: (sessionId: string) => ledger.sessions[sessionId]?.consolidatedAt,
        ...(space.agentsMd === undefined
          ? {}
          : { agents: { file: space.agentsMd, budget: space.agentsMdBudget } }),
      };
      const { plan, curation, overBudget } = await planAndCurate(writeOptions, {
        config: config.curation ?? DEFAULT_CURATION,
        model: getModel,
        maxCalls: config.limits.maxCallsPerRun - extracted.calls,
        maxOutputTokens: config.model.maxOutputTokens,
        costOf,
        signal: runOptions.signal,
      });
      progress({ phase: 'reconcile', done: 1, total: 1 });

      const inProgress = [...gathered.progress].map(
        ([id, part]) => `${describeProgress(id, part.nextMessage, part)}; the rest follows in the next runs`,
      );
      // Every session not consolidated to its end, with why: cut by the call budget, or its answer dropped.
      const unconsolidated: WaitingSession[] = [
        ...[...gathered.deferred, ...gathered.progress.keys()].map((sessionId) => ({
          sessionId,
          ...(extracted.waiting.get(sessionId) ?? {
            reason: 'call-budget' as const,
            detail: 'the run reached limits.maxCallsPerRun; the session continues in the next run',
          }),
        })),
        ...(stage?.kind === 'exclude' ? batchPendingSessions(stage.pending, scan.excluded) : []),
      ];
      const notes = [
        ...(noBatchApi === undefined ? [] : [noBatchApi]),
        ...inProgress,
        ...describeWaiting(unconsolidated),
        ...extracted.notes,
        ...curationNotes(curation),
        ...overBudget,
        ...(proposals?.dropped ?? []),
        ...(kept.length > candidates.length
          ? [`${kept.length - candidates.length} fact(s) rejected earlier from the same sessions left out`]
          : []),
      ];
      const fileOf = new Map(gathered.records.map((record) => [record.sessionId, record.file]));
      const done = summary({
        ...base,
        status: request.dryRun ? 'dry-run' : 'completed',
        reason: notes.length > 0 ? notes.join('; ') : undefined,
        notes,
        sessions: gathered.sessions,
        added: plan.result.added.length,
        updated: plan.result.updated.length,
        superseded: plan.result.superseded.length,
        quarantined: plan.result.quarantined.length,
        ...(plan.result.quarantined.length > 0
          ? { heldBack: countHeldBack(plan.result.quarantined.map((verdict) => verdict.reason)) }
          : {}),
        factsRead: plan.factsRead,
        ...(stated.length > 0 ? { alreadyInProjectFiles: stated.length } : {}),
        ...(plan.archived.length > 0 ? { archived: plan.archived.length } : {}),
        ...(curation.calls > 0 ? { curation: curationSummary(curation, plan.merged.length) } : {}),
        calls: extracted.calls + curation.calls,
        retries: extracted.retries,
        usage: addUsage(extracted.usage, curation.usage),
        ...(extracted.perCall.length > 0
          ? { outputTokensPerCall: extracted.perCall.map((call) => call.outputTokens) }
          : {}),
        unconsolidated,
        ...(Object.keys(extracted.factsDropped).length > 0 ? { factsDropped: extracted.factsDropped } : {}),
        ...(stage?.kind === 'collect'
          ? { batch: batchRecord(stage.pending, extracted.batched, 'collected', batchFactorOf(config)) }
          : {}),
        costUsd:
          extracted.costUsd === undefined
            ? undefined
            : roundUsd(extracted.costUsd + (curation.calls > 0 ? (curation.costUsd ?? 0) : 0)),
        model: extracted.calls + curation.calls > 0 ? getModel().label : '',
        diff: plan.diff,
        problems: uniqueProblems([
          ...gathered.problems.map((problem) => ({ ...problem, kind: 'session' as const })),
          ...plan.problems.map((problem) => ({ ...problem, kind: 'memory' as const })),
          ...curationReview(curation).map((problem) => ({ ...problem, kind: 'memory' as const })),
          ...extracted.problems.map((problem) => ({
            file: fileOf.get(problem.sessionId) ?? problem.sessionId,
            reason: problem.reason,
            kind: 'session' as const,
          })),
        ]),
      });
      // A session consolidated in part: its entry says how far, and never matches the file (mtimeMs -1), so
      // the next scan reads the rest from `messageCount`.
      const ledgerEntries = plan.ledgerEntries.map((entry) => {
        const part = gathered.progress.get(entry.sessionId);
        return part === undefined
          ? entry
          : {
              ...entry,
              mtimeMs: -1,
              progress: { part: part.part, parts: part.parts, totalMessages: part.totalMessages },
            };
      });
      if (request.dryRun) return { ...done, durationMs: elapsed() };
      if (plan.ledgerEntries.length === 0 && plan.files.size === 0) {
        return ended({
          ...done,
          status: 'skipped',
          reason:
            unconsolidated.length > 0
              ? `nothing consolidated: ${describeWaiting(unconsolidated).join('; ')}`
              : `no new messages in settled sessions${waitingLive(counted.live, config.gates.quietMinutes)}`,
          durationMs: elapsed(),
        });
      }

      // Approval mode: a run that would change files stages its proposal and writes nothing more.
      if (space.approve === true && plan.files.size > 0) {
        const proposed = {
          ...done,
          status: 'proposed' as const,
          reason: [awaitingDecision(runId, space.id), ...notes].join('; '),
          durationMs: elapsed(),
        };
        await proposeRun(space, {
          plan,
          memory: plan.memory ?? memory,
          summary: proposed,
          reads: [...earlierReads, ...gathered.reads],
          today,
          now: now(),
          ledgerEntries,
          segments: gathered.batches.flatMap(({ batch }) => batch.segments),
        });
        return ended(proposed);
      }

      // Write: memory files, quarantine, ledger and run record in one staged transaction.
      progress({ phase: 'write', done: 0, total: 1 });
      let final = { ...done, durationMs: elapsed() };
      const heldLock = lock;
      try {
        await claudeCodeLock?.confirm();
        const record = await commitMemoryChanges(space.memoryDir, {
          runId,
          files: plan.files,
          basis: plan.basis,
          ledger: nextLedgerContent(ledger, ledgerEntries),
          runRecord: { summary: final },
          now,
          keepRuns: (config.history ?? DEFAULT_HISTORY).keepRuns,
          ...(heldLock !== undefined ? { beforeCommit: () => heldLock.assertHeld() } : {}),
          faultInjection: (step) => inject(`commit:${step}`),
        });
        claudeCodeLock?.consolidated(now());
        // A file someone kept writing during the commit was deferred: the record says so, and so does the summary.
        final = { ...final, problems: record.summary.problems };
      } catch (error) {
        if (!(error instanceof LockLostError)) throw error;
        // Nothing was written: every session the run meant to consolidate waits, as do those it left already.
        const lost = new Set(unconsolidated.map((entry) => entry.sessionId));
        return {
          ...done,
          status: 'lock-lost',
          reason: error.message,
          unconsolidated: [
            ...gathered.sessions
              .filter((sessionId) => !lost.has(sessionId))
              .map((sessionId) => ({
                sessionId,
                reason: 'lock-lost' as const,
                detail: `the run lost its lock before its commit and wrote nothing: ${error.message}`,
              })),
            ...unconsolidated,
          ],
          added: 0,
          updated: 0,
          superseded: 0,
          quarantined: 0,
          diff: '',
          durationMs: elapsed(),
        };
      }
      progress({ phase: 'write', done: 1, total: 1 });
      return ended(final);
    } finally {
      await claudeCodeLock?.release();
      await lock?.release();
    }
  }
}

/** The reason a run of an approval space gives while its proposal waits. */
function awaitingDecision(runId: string, spaceId: string): string {
  return (
    `proposal ${runId} awaits a decision: see it with \`dreamd proposals ${spaceId}\`, then ` +
    `\`dreamd accept ${runId}\` or \`dreamd reject ${runId}\` (each takes --only <fact ids>)`
  );
}

/** Each problem once: the memory folder's load and its index plan can both see one `MEMORY.md` problem. */
function uniqueProblems<T extends { readonly file: string; readonly reason: string }>(
  problems: readonly T[],
): T[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.file}\0${problem.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
