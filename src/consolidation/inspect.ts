import { access } from 'node:fs/promises';
import { keepOutSettings, type Config, type Space } from '../config/schema.js';
import type { SpaceInspection } from '../core/inspection.js';
import { spaceBudget } from '../cost/index.js';
import { errorMessage } from '../errors.js';
import {
  createLedgerLookup,
  createLedgerReader,
  createRunRecordReader,
  keptOutLookup,
  lastSuccessfulRun,
  readKeptOut,
  readLedger,
  readLock,
  staleReason,
  stateProblems,
  type Ledger,
  type RunRecord,
} from '../space/index.js';
import { claudeCodeLockHolder } from '../space/claude-code-hold.js';
import type { ParsedFileReader } from '../space/parsed-files.js';
import { countByStatus, scanSessions, type ScanResult } from '../transcripts/index.js';

export interface InspectOptions {
  /** The config, or a function returning the live one (read at every inspection). */
  readonly config: Config | (() => Config);
  readonly now?: () => Date;
  /**
   * Readers that keep each space's ledger and last run record while their files are unchanged
   * ({@link createInspectReads}): what the scheduler's ticks share, so an idle tick costs a stat per file.
   */
  readonly reads?: InspectReads;
}

/** The parsed files inspections share (see `space/parsed-files.ts`). */
export interface InspectReads {
  readonly ledger: ParsedFileReader<Ledger>;
  readonly runRecord: ParsedFileReader<RunRecord>;
}

/** Readers for the inspections of one daemon (or any caller that inspects the same spaces again and again). */
export function createInspectReads(): InspectReads {
  return { ledger: createLedgerReader(), runRecord: createRunRecordReader() };
}

/** A space's inspection and the scan behind it (status and `sessions list` show both). */
export interface DetailedInspection {
  readonly inspection: SpaceInspection;
  readonly scan: ScanResult | undefined;
}

/**
 * The cheap look at a space that the scheduler runs every tick: lists the sessions directory (one stat a
 * file), reads the ledger, the last run and the lock. Sessions already consolidated are not parsed.
 * Never throws: a space that cannot be inspected comes back with `error` set, and its gates stay closed.
 */
export async function inspectSpaceDetailed(
  space: Space,
  options: InspectOptions,
): Promise<DetailedInspection> {
  const now = options.now?.() ?? new Date();
  const config = typeof options.config === 'function' ? options.config() : options.config;
  try {
    // A space of several sources reads what each folder holds; one not written yet holds nothing.
    if (space.sources === undefined) await access(space.sessionsDir);
  } catch (error) {
    return uninspectable(
      space,
      `sessions directory ${space.sessionsDir} cannot be read (${errorMessage(error)}); create it or fix the space's path`,
    );
  }
  try {
    // State that is not dreamd's (a link, a folder where a file should be) closes the gates, with the path.
    const [hijacked] = await stateProblems(space.memoryDir);
    if (hijacked !== undefined) return uninspectable(space, `cannot run: ${hijacked.reason}`);
    const ledger = await readLedger(space.memoryDir, options.reads?.ledger);
    const scan = await scanSessions({
      space,
      ledger: createLedgerLookup(ledger),
      now,
      quietMinutes: config.gates.quietMinutes,
      maxBytes: config.limits.maxSessionBytes,
      keptOut: keptOutLookup(await readKeptOut(space.memoryDir), keepOutSettings(config)),
    });
    const counts = countByStatus(scan);
    const budgetUsd = config.limits.monthlyBudgetUsd;
    const [lastRun, lock, budget, claudeCodeLock] = await Promise.all([
      lastSuccessfulRun(space.memoryDir, options.reads?.runRecord),
      readLock(space.memoryDir),
      budgetUsd === undefined ? undefined : spaceBudget(space.memoryDir, budgetUsd, now),
      claudeCodeLockHolder(space.memoryDir, { now: () => now }),
    ]);
    const staleMs = config.limits.lockStaleMinutes * 60_000;
    const liveLock = lock !== undefined && staleReason(lock, now, staleMs) === undefined ? lock : undefined;
    return {
      inspection: {
        spaceId: space.id,
        settledNew: counts.settled,
        live: counts.live,
        broken: scan.entries
          .filter((entry) => entry.status === 'broken')
          .map((entry) => ({ file: entry.file, reason: entry.message ?? entry.reason ?? 'unreadable' })),
        lastSuccessfulRunAt: lastRun?.committedAt,
        continuing: Object.values(ledger.sessions).some((entry) => entry.progress !== undefined),
        // A spent budget closes the gates here, so the scheduler does not queue a run that would only wait.
        budget: budget?.waiting ?? undefined,
        lock:
          liveLock !== undefined
            ? { owner: liveLock.owner, pid: liveLock.pid, host: liveLock.host, startedAt: liveLock.startedAt }
            : undefined,
        claudeCodeLock,
      },
      scan,
    };
  } catch (error) {
    return uninspectable(space, errorMessage(error));
  }
}

/** A space that could not be looked at: nothing counted, and `error` keeps its gates closed. */
function uninspectable(space: Space, error: string): DetailedInspection {
  return {
    inspection: { spaceId: space.id, settledNew: 0, live: 0, broken: [], error },
    scan: undefined,
  };
}

/** `inspectSpace` for the daemon: the inspection without the scan. */
export function createInspectSpace(options: InspectOptions): (space: Space) => Promise<SpaceInspection> {
  return async (space) => (await inspectSpaceDetailed(space, options)).inspection;
}
