/**
 * One consolidation run for one space: gates → orient → gather → extract → reconcile → write.
 *
 * States of a run: `locked` (lock taken, or skipped for a dry run) → `gated` (closed: skipped, nothing
 * written) → `gathered` (digests built) → `extracted` (model answered for every batch; a model failure ends
 * the run here, nothing written, sessions stay pending) → `reconciled` → `committed` (memory, ledger,
 * quarantine and run record moved into place by one staged transaction) → lock released.
 * A retried run is idempotent: sessions the ledger already holds are not read again.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Config, Space } from '../config/schema.js';
import { evaluateGates } from '../daemon/gates.js';
import { containsSecret, digestSession, planBatches, redactSecrets, type SessionDigest } from '../digest/index.js';
import {
  acquireLock,
  createIsForgotten,
  createLedgerLookup,
  diffFiles,
  lastSuccessfulRun,
  loadMemory,
  newFactId,
  newRunId,
  nextLedgerContent,
  QUARANTINE_FILE,
  rankFacts,
  readForgotten,
  readLedger,
  readTextIfExists,
  recoverMemory,
  renderMemory,
  renderQuarantine,
  hookOf,
  commitMemoryChanges,
  INDEX_FILE,
  type LoadedMemory,
  type CommitStep,
  type HeldLock,
  type QuarantineEntry,
} from '../memory/index.js';
import { TOPIC_FILES, type LedgerEntry } from '../memory/types.js';
import { addUsage, emptyUsage, type ModelProvider, type TokenUsage } from '../model/types.js';
import { readSettledSessions, scanSessions } from '../transcripts/index.js';
import {
  buildExtractionPrompt,
  EXTRACTION_INSTRUCTIONS,
  EXTRACTION_SCHEMA_NAME,
  ExtractionOutput,
  type ExtractedFact,
  type IndexEntry,
} from './extraction.js';
import { reconcile } from './reconcile.js';
import type { ConsolidateFunction, RunOptions, RunProgress, RunRequest, RunSummary } from './types.js';

/** Named points of a run where a test may inject a crash (in addition to the commit's own steps). */
export type RunStep = 'after-orient' | 'after-digest' | 'after-extraction' | `commit:${CommitStep}`;

/** Active facts the model sees as the current index, so it can say which one a new fact replaces. */
export const PROMPT_INDEX_FACTS = 200;

export interface ConsolidatorOptions {
  readonly config: Config;
  /** The model, or a factory called on the first run that needs one (a missing key fails that run only). */
  readonly model: ModelProvider | (() => ModelProvider);
  readonly now?: () => Date;
  /** Lock owner shown in status, e.g. "worker 12345". Default `dreamd <pid>@<host>`. */
  readonly owner?: string;
  /** Test hook: called at each named step; throw (or kill the process) to simulate a crash there. */
  readonly faultInjection?: (step: RunStep) => void;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function summary(fields: Partial<RunSummary> & Pick<RunSummary, 'runId' | 'spaceId' | 'status'>): RunSummary {
  return {
    reason: undefined,
    sessions: [],
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 0,
    usage: emptyUsage(),
    model: '',
    durationMs: 0,
    diff: '',
    problems: [],
    ...fields,
  };
}

/** Candidates are tied to the sessions of their batch: unknown source ids are dropped, none means all. */
function anchorCandidate(
  candidate: ExtractedFact,
  batchSessions: readonly string[],
  dates: Map<string, string>,
): ExtractedFact {
  const known = candidate.sources.filter((source) => batchSessions.includes(source));
  const sources = known.length > 0 ? known : [...batchSessions];
  const observed = /^\d{4}-\d{2}-\d{2}$/.test(candidate.observed)
    ? candidate.observed
    : (sources
        .map((source) => dates.get(source) ?? '')
        .sort()
        .at(-1) ?? candidate.observed);
  return { ...candidate, sources, observed };
}

/** Whether a topic file or the index differs on disk from what `loaded` read. */
async function changedSince(memoryDir: string, loaded: LoadedMemory): Promise<boolean> {
  for (const file of [...Object.values(TOPIC_FILES), INDEX_FILE]) {
    // An unreadable file was reported by loadMemory and is not rewritten: not a change.
    const before = loaded.originals.get(file) ?? null;
    const onDisk = await readTextIfExists(join(memoryDir, file)).catch(() => before);
    if (onDisk !== before) return true;
  }
  return false;
}

/** Creates the function the CLI and the workers call to consolidate one space. */
export function createConsolidator(options: ConsolidatorOptions): ConsolidateFunction {
  const { config } = options;
  const now = options.now ?? (() => new Date());
  const owner = options.owner ?? `dreamd ${process.pid}@${hostname()}`;
  let model: ModelProvider | undefined = typeof options.model === 'function' ? undefined : options.model;
  const getModel = (): ModelProvider => (model ??= (options.model as () => ModelProvider)());
  const inject = options.faultInjection ?? (() => undefined);

  return async function consolidate(
    space: Space,
    request: RunRequest,
    runOptions: RunOptions = {},
  ): Promise<RunSummary> {
    const started = Date.now();
    const runId = newRunId(now());
    const progress = (update: RunProgress): void => runOptions.onProgress?.(update);
    const base = { runId, spaceId: space.id };

    await recoverMemory(space.memoryDir);
    let lock: HeldLock | undefined;
    if (!request.dryRun) {
      lock = await acquireLock(space.memoryDir, {
        owner: request.jobId !== undefined ? `${owner} job ${request.jobId}` : owner,
        staleMs: config.limits.lockStaleMinutes * 60_000,
        now,
        space: space.id,
      });
    }
    try {
      // Orient: memory as it is now, and what has been consolidated.
      progress({ phase: 'orient', done: 0, total: 1 });
      const [memory, ledger, forgotten, lastRun] = await Promise.all([
        loadMemory(space.memoryDir),
        readLedger(space.memoryDir),
        readForgotten(space.memoryDir),
        lastSuccessfulRun(space.memoryDir),
      ]);
      const ledgerLookup = createLedgerLookup(ledger);
      const scan = await scanSessions({
        space,
        ledger: ledgerLookup,
        now: now(),
        quietMinutes: config.gates.quietMinutes,
        maxBytes: config.limits.maxSessionBytes,
      });
      const settled = scan.entries.filter((entry) => entry.status === 'settled').length;
      const gates = evaluateGates({
        inspection: {
          spaceId: space.id,
          settledNew: settled,
          live: 0,
          broken: [],
          lastSuccessfulRunAt: lastRun?.committedAt,
        },
        gates: config.gates,
        now: now(),
        force: request.force,
      });
      if (!gates.open) {
        return summary({
          ...base,
          status: 'skipped',
          reason: gates.reasons.join('; '),
          durationMs: Date.now() - started,
        });
      }
      progress({ phase: 'orient', done: 1, total: 1 });
      inject('after-orient');

      // Gather: new messages of settled sessions, digested, in as few batches as the budget allows.
      const read = await readSettledSessions(scan, {
        ledger: ledgerLookup,
        maxBytes: config.limits.maxSessionBytes,
      });
      const problems = read.problems.map((problem) => ({ file: problem.file, reason: problem.message }));
      const digests: SessionDigest[] = [];
      const sessionDates = new Map<string, string>();
      read.sessions.forEach((session, index) => {
        const fromMessage = session.messages[0]?.index ?? 0;
        digests.push(digestSession(session, { toolResultChars: config.limits.toolResultChars, fromMessage }));
        sessionDates.set(session.id, session.startedAt.slice(0, 10));
        progress({ phase: 'gather', done: index + 1, total: read.sessions.length });
      });
      const allBatches =
        digests.length > 0 ? planBatches(digests, { tokensPerCall: config.limits.digestTokensPerCall }) : [];
      // Past the call budget, whole sessions wait for the next run (a session split over batches goes only if all fit).
      const batches = allBatches.slice(0, config.limits.maxCallsPerRun);
      const deferred = new Set(
        allBatches.slice(config.limits.maxCallsPerRun).flatMap((batch) => batch.sessionIds),
      );
      inject('after-digest');

      // Extract: one structured-output call per batch.
      const active = memory.facts.filter((fact) => fact.status === 'active');
      const index: IndexEntry[] = rankFacts(active, now())
        .slice(0, PROMPT_INDEX_FACTS)
        .map((fact) => ({ id: fact.id, type: fact.type, title: fact.title, hook: hookOf(fact) }));
      const today = isoDay(now());
      const candidates: ExtractedFact[] = [];
      let usage: TokenUsage = emptyUsage();
      let calls = 0;
      for (const batch of batches) {
        progress({ phase: 'extract', done: calls, total: batches.length });
        const sessionIds = batch.sessionIds.filter((id) => !deferred.has(id));
        if (sessionIds.length === 0) continue;
        const result = await getModel().generateObject({
          system: EXTRACTION_INSTRUCTIONS,
          prompt: buildExtractionPrompt({ index, digestText: batch.text, today }),
          schema: ExtractionOutput,
          schemaName: EXTRACTION_SCHEMA_NAME,
          maxOutputTokens: config.model.maxOutputTokens,
          ...(runOptions.signal !== undefined ? { signal: runOptions.signal } : {}),
        });
        calls += 1;
        usage = addUsage(usage, result.usage);
        for (const candidate of result.value.facts)
          candidates.push(anchorCandidate(candidate, sessionIds, sessionDates));
      }
      progress({ phase: 'extract', done: calls, total: batches.length });
      inject('after-extraction');

      // Reconcile: pure; newest observation wins, nothing deleted, instructions and secrets held back.
      progress({ phase: 'reconcile', done: 0, total: 1 });
      const plan = (loaded: LoadedMemory) => {
        const reconciled = reconcile({
          existing: loaded.facts,
          candidates,
          today,
          newId: newFactId,
          isForgotten: createIsForgotten(forgotten),
          containsSecret,
        });
        return { result: reconciled, files: new Map<string, string | null>(renderMemory(loaded, reconciled.facts, { now: now() })) };
      };
      let current = memory;
      let { result, files } = plan(current);
      // People edit memory files without the lock: one edited since orient is read again and the facts
      // reconciled on what is there now, so the edit is kept (a few tries, for someone saving repeatedly).
      for (let attempt = 0; attempt < 3 && (await changedSince(space.memoryDir, current)); attempt++) {
        current = await loadMemory(space.memoryDir);
        ({ result, files } = plan(current));
      }
      progress({ phase: 'reconcile', done: 1, total: 1 });

      // Write: memory files, quarantine, ledger and run record in one staged transaction.
      // The quarantine is plain text on disk: a secret the model put in a fact is redacted there too.
      const quarantine: QuarantineEntry[] = result.quarantined.map(({ candidate, reason }) => ({
        title: redactSecrets(candidate.title).text,
        text: redactSecrets(candidate.body).text,
        reason,
        session: candidate.sources.join(', '),
        date: candidate.observed,
        runId,
      }));
      const quarantineBefore =
        quarantine.length > 0 ? await readTextIfExists(join(space.memoryDir, QUARANTINE_FILE)) : null;
      if (quarantine.length > 0) files.set(QUARANTINE_FILE, renderQuarantine(quarantineBefore, quarantine));
      const consolidatedAt = now().toISOString();
      const entries: LedgerEntry[] = read.records
        .filter((record) => !deferred.has(record.sessionId))
        .map((record) => ({
          sessionId: record.sessionId,
          file: record.file,
          messageCount: record.messageCount,
          size: record.size,
          mtimeMs: record.mtimeMs,
          runId,
          consolidatedAt,
        }));
      const sessions = read.sessions.map((session) => session.id).filter((id) => !deferred.has(id));
      const before = new Map<string, string | null>(
        [...files.keys()].map((path) => [
          path,
          path === QUARANTINE_FILE ? quarantineBefore : (current.originals.get(path) ?? null),
        ]),
      );
      const done = summary({
        ...base,
        status: request.dryRun ? 'dry-run' : 'completed',
        reason:
          deferred.size > 0
            ? `${deferred.size} session(s) wait for the next run (limits.maxCallsPerRun)`
            : undefined,
        sessions,
        added: result.added.length,
        updated: result.updated.length,
        superseded: result.superseded.length,
        quarantined: result.quarantined.length,
        calls,
        usage,
        model: calls > 0 ? getModel().label : '',
        diff: diffFiles(before, files),
        problems,
      });
      if (request.dryRun) return { ...done, durationMs: Date.now() - started };
      if (entries.length === 0 && files.size === 0) {
        return {
          ...done,
          status: 'skipped',
          reason: 'no new messages in settled sessions',
          durationMs: Date.now() - started,
        };
      }
      progress({ phase: 'write', done: 0, total: 1 });
      const final = { ...done, durationMs: Date.now() - started };
      await commitMemoryChanges(space.memoryDir, {
        runId,
        files,
        ledger: nextLedgerContent(ledger, entries),
        runRecord: { summary: final },
        now,
        faultInjection: (step) => inject(`commit:${step}`),
      });
      progress({ phase: 'write', done: 1, total: 1 });
      return final;
    } finally {
      await lock?.release();
    }
  };
}
