/**
 * Run history (`.dreamd/runs/<runId>.json`): one record per run that wrote memory (consolidation, rollback,
 * forget). A record holds the run's summary and, for rollback, the bytes every changed file had before the
 * run (null for a file the run created) and a hash of the bytes it wrote (null for a file it deleted).
 * Records are written by `commitMemoryChanges`, in the same transaction as the memory they describe.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { MemoryFormatError, errorMessage } from '../errors.js';
import { FACT_DROP_REASONS, HELD_BACK_KINDS, WAIT_REASONS, type RunSummary } from '../core/run.js';
import { RUNS_DIR, readTextIfExists, runRecordPath } from './paths.js';
import { createParsedFileReader, readParsedOnce, type ParsedFileReader } from './parsed-files.js';
import { escapeInvisibleControls } from '../memory/visible-text.js';
import type { MemoryProblem } from './memory-dir.js';

export const RUN_KINDS = ['consolidation', 'rollback', 'forget', 'note', 'reject'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

const DecidedChangeSchema = z.object({ id: z.string(), title: z.string() });

const RunSummarySchema = z.object({
  runId: z.string(),
  spaceId: z.string(),
  status: z.enum(['completed', 'skipped', 'dry-run']),
  reason: z.string().optional(),
  sessions: z.array(z.string()),
  added: z.number(),
  updated: z.number(),
  superseded: z.number(),
  quarantined: z.number(),
  /** The quarantined facts by what the screen saw; absent in older records and runs that held none back. */
  heldBack: z.partialRecord(z.enum(HELD_BACK_KINDS), z.number().int().nonnegative()).optional(),
  calls: z.number(),
  usage: z.object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadTokens: z.number(),
    cacheWriteTokens: z.number(),
  }),
  /** Absent in records written before retries were counted: 0. */
  retries: z.number().int().nonnegative().default(0),
  /** Output tokens of each extraction call; absent in older records and for runs without a call. */
  outputTokensPerCall: z.array(z.number().int().nonnegative()).optional(),
  /** `calls` by kind; absent in older records and runs without a call. */
  callKinds: z
    .object({
      extraction: z.number().int().nonnegative(),
      updateCheck: z.number().int().nonnegative(),
      curation: z.number().int().nonnegative(),
      /** Curation calls that carried the update check too; absent: none (or an older record). */
      updateCheckCarried: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** Extraction answers thrown away unread and asked again in halves; absent: none (or an older record). */
  answersAskedAgain: z.number().int().nonnegative().optional(),
  /** Facts per user line the run's answers carried, when an answer came near the answer limit. */
  factsPerUserLine: z.number().nonnegative().optional(),
  model: z.string(),
  /** USD the run's model calls cost at list price; absent for runs without a known price (and old records). */
  costUsd: z.number().optional(),
  durationMs: z.number(),
  diff: z.string(),
  problems: z.array(
    z.object({ file: z.string(), reason: z.string(), kind: z.enum(['session', 'memory']).optional() }),
  ),
  notes: z.array(z.string()).optional(),
  unconsolidated: z
    .array(z.object({ sessionId: z.string(), reason: z.enum(WAIT_REASONS), detail: z.string() }))
    .optional(),
  factsDropped: z.partialRecord(z.enum(FACT_DROP_REASONS), z.number().int().nonnegative()).optional(),
  batch: z
    .object({
      id: z.string(),
      submittedAt: z.string(),
      requests: z.number().int().nonnegative(),
      batchedCalls: z.number().int().nonnegative(),
      costUsd: z.number().optional(),
      listCostUsd: z.number().optional(),
      priceFactor: z.number().optional(),
      outcome: z.enum(['collected', 'failed']),
    })
    .optional(),
  /** Facts moved to the archive; absent in older records and runs that moved none. */
  archived: z.number().int().nonnegative().optional(),
  /** The curation phase; absent when the run made no curation call. */
  curation: z
    .object({
      types: z.array(z.object({ type: z.string(), why: z.array(z.string()) })),
      calls: z.number().int().nonnegative(),
      usage: z.object({
        inputTokens: z.number(),
        outputTokens: z.number(),
        cacheReadTokens: z.number(),
        cacheWriteTokens: z.number(),
      }),
      costUsd: z.number().optional(),
      results: z.number().int().nonnegative(),
      merged: z.number().int().nonnegative(),
      refused: z.array(z.object({ type: z.string(), title: z.string(), reason: z.string() })),
    })
    .optional(),
  /** A person's decision on a proposal; absent on runs that decided none (and in older records). */
  decision: z
    .object({
      proposal: z.string(),
      action: z.enum(['accept', 'reject']),
      decided: z.array(DecidedChangeSchema),
      rest: z.array(DecidedChangeSchema),
    })
    .optional(),
});

const FileChangeSchema = z.object({
  /** Bytes before the run; null when the run created the file. */
  before: z.string().nullable(),
  /** sha256 of the bytes the run wrote; null when the run deleted the file. */
  afterHash: z.string().nullable(),
  /**
   * The bytes the run meant to write, when someone else's bytes (a person's lines, an agent's save) arrived
   * during the commit and were merged into them: a rollback then takes back the run's change only and keeps
   * theirs. Absent when nothing was merged.
   */
  planned: z.string().optional(),
});
export type FileChange = z.infer<typeof FileChangeSchema>;

const RunRecordSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  kind: z.enum(RUN_KINDS),
  /** Order of commits in this memory directory, from 1. */
  seq: z.number().int().positive(),
  /** ISO time the run was committed. */
  committedAt: z.string(),
  /** For a rollback: the run it undid. */
  rollbackOf: z.string().optional(),
  summary: RunSummarySchema,
  /** Memory files the run changed, by relative path. The ledger is not among them. */
  files: z.record(z.string(), FileChangeSchema),
});

export interface RunRecord {
  readonly version: 1;
  readonly runId: string;
  readonly kind: RunKind;
  readonly seq: number;
  readonly committedAt: string;
  readonly rollbackOf: string | undefined;
  readonly summary: RunSummary;
  readonly files: Readonly<Record<string, FileChange>>;
}

export function parseRunRecord(text: string, file: string): RunRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MemoryFormatError(`${file}: not valid JSON (${errorMessage(error)})`, file, { cause: error });
  }
  const parsed = RunRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MemoryFormatError(
      `${file}: ${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`,
      file,
    );
  }
  const data = parsed.data;
  return { ...data, rollbackOf: data.rollbackOf, summary: { ...data.summary, reason: data.summary.reason } };
}

/** The record as written: JSON, with hidden and bidi characters escaped (`visible-text.ts`). */
export function serializeRunRecord(record: RunRecord): string {
  return `${escapeInvisibleControls(JSON.stringify(record, null, 2))}\n`;
}

/** One run's record. Throws MemoryFormatError when it is missing or unreadable. */
export async function readRun(memoryDir: string, runId: string): Promise<RunRecord> {
  const relative = runRecordPath(runId);
  const text = await readTextIfExists(path.join(memoryDir, relative));
  if (text === null)
    throw new MemoryFormatError(
      `no run ${runId} in ${path.join(memoryDir, RUNS_DIR)}; see \`dreamd history\``,
      relative,
    );
  return parseRunRecord(text, relative);
}

/**
 * Names of the regular files in `.dreamd/runs/`; none when the directory does not exist yet. A link or a
 * folder there is not dreamd's and is skipped (never followed).
 */
export async function runRecordNames(memoryDir: string): Promise<string[]> {
  try {
    const entries = await readdir(path.join(memoryDir, RUNS_DIR), { withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * Every run record, oldest first (by commit order). Unreadable records are skipped and reported in
 * `problems` when given.
 */
export async function listRuns(memoryDir: string, problems?: MemoryProblem[]): Promise<RunRecord[]> {
  const names = await runRecordNames(memoryDir);
  const runs: RunRecord[] = [];
  for (const name of names.filter((entry) => entry.endsWith('.json')).sort()) {
    const relative = `${RUNS_DIR}/${name}`;
    const text = await readTextIfExists(path.join(memoryDir, relative));
    if (text === null) continue;
    try {
      runs.push(parseRunRecord(text, relative));
    } catch (error) {
      problems?.push({ file: relative, reason: errorMessage(error) });
    }
  }
  return runs.sort(
    (a, b) => a.seq - b.seq || (a.committedAt < b.committedAt ? -1 : a.committedAt > b.committedAt ? 1 : 0),
  );
}

/**
 * A record file named by `newRunId`: `<kind>-<YYYYMMDDTHHMMSSZ>-<random>.json`. The stamp is the run's start,
 * and a run commits under the space's lock, which a second run never waits for (it fails with
 * LockBusyError): so a record with an earlier stamp, to the second, has an earlier commit and a lower `seq`.
 */
const STAMPED_RECORD = /^[a-z]+-(\d{8}T\d{6}Z)-[A-Za-z0-9]+\.json$/;

function isSuccessfulConsolidation(run: RunRecord): boolean {
  return run.kind === 'consolidation' && run.summary.status === 'completed';
}

/** A reader of run records that parses each one again only when it changed (see `parsed-files.ts`). */
export function createRunRecordReader(): ParsedFileReader<RunRecord> {
  return createParsedFileReader(parseRunRecord);
}

/**
 * The latest consolidation run that completed (highest `seq`), or undefined. Its `committedAt` feeds the time
 * gate, so the scheduler asks on every tick, for every space: records are read newest first by their stamp,
 * and reading stops at the first stamp older than the newest successful consolidation found. Records hold
 * the old bytes of every file they changed, so reading them all would grow each tick with the history.
 * Records not named by `newRunId` cannot be ordered by name and are always read. Unreadable records are
 * skipped, as `listRuns` skips them. `parsed`: a reader that keeps the records it parsed while their files are
 * unchanged (`createRunRecordReader`; the scheduler's tick), read-only.
 */
export async function lastSuccessfulRun(
  memoryDir: string,
  parsed: ParsedFileReader<RunRecord> = readParsedOnce(parseRunRecord),
): Promise<RunRecord | undefined> {
  const names = await runRecordNames(memoryDir);
  const stamped: { name: string; stamp: string }[] = [];
  const unstamped: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const stamp = STAMPED_RECORD.exec(name)?.[1];
    if (stamp === undefined) unstamped.push(name);
    else stamped.push({ name, stamp });
  }
  stamped.sort((a, b) => (a.stamp !== b.stamp ? (a.stamp < b.stamp ? 1 : -1) : a.name < b.name ? 1 : -1));

  let latest: RunRecord | undefined;
  const consider = async (name: string): Promise<RunRecord | undefined> => {
    const relative = `${RUNS_DIR}/${name}`;
    let run: RunRecord | null;
    try {
      run = await parsed(path.join(memoryDir, relative));
    } catch {
      return undefined;
    }
    if (run === null) return undefined;
    if (!isSuccessfulConsolidation(run)) return undefined;
    if (latest === undefined || run.seq > latest.seq) latest = run;
    return run;
  };
  for (const name of unstamped) await consider(name);
  let newestStamp: string | undefined;
  for (const { name, stamp } of stamped) {
    if (newestStamp !== undefined && stamp < newestStamp) break;
    if ((await consider(name)) !== undefined) newestStamp ??= stamp;
  }
  return latest;
}

/**
 * The `seq` the next run record gets: one more than the highest in the history. Like `lastSuccessfulRun`, it
 * reads only the records with the newest stamp (and any not named by `newRunId`), not the whole history, so
 * committing does not slow down as the history grows.
 */
export async function nextRunSeq(memoryDir: string): Promise<number> {
  const names = await runRecordNames(memoryDir);
  const records = names.filter((name) => name.endsWith('.json'));
  const stamps = records.map((name) => STAMPED_RECORD.exec(name)?.[1]);
  const newest = stamps.reduce<string | undefined>(
    (max, stamp) => (stamp !== undefined && (max === undefined || stamp > max) ? stamp : max),
    undefined,
  );
  let highest = 0;
  for (const [index, name] of records.entries()) {
    const stamp = stamps[index];
    if (stamp !== undefined && stamp !== newest) continue;
    const relative = `${RUNS_DIR}/${name}`;
    const text = await readTextIfExists(path.join(memoryDir, relative));
    if (text === null) continue;
    try {
      highest = Math.max(highest, parseRunRecord(text, relative).seq);
    } catch {
      // An unreadable record is skipped here as listRuns skips it.
    }
  }
  return highest + 1;
}

/**
 * Records to delete so that `keep` remain (the caller adds its own new record on top): the oldest by their
 * stamp, never the newest completed consolidation (the time gate's reference) and never a record not named
 * by `newRunId` (it cannot be ordered by name). Relative paths, oldest first. Reads only names and, for the
 * newest consolidation, the records `lastSuccessfulRun` reads.
 */
export async function runsToPrune(memoryDir: string, keep: number): Promise<string[]> {
  const names = await runRecordNames(memoryDir);
  const stamped = names
    .map((name) => ({ name, stamp: STAMPED_RECORD.exec(name)?.[1] }))
    .filter((entry): entry is { name: string; stamp: string } => entry.stamp !== undefined)
    .sort((a, b) => (a.stamp !== b.stamp ? (a.stamp < b.stamp ? -1 : 1) : a.name < b.name ? -1 : 1));
  const excess = stamped.length - Math.max(0, keep);
  if (excess <= 0) return [];
  const protectedRun = await lastSuccessfulRun(memoryDir);
  const keepName = protectedRun === undefined ? undefined : `${protectedRun.runId}.json`;
  return stamped
    .slice(0, excess)
    .filter((entry) => entry.name !== keepName)
    .map((entry) => `${RUNS_DIR}/${entry.name}`);
}
