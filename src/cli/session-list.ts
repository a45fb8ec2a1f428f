/**
 * What `dreamd sessions list` shows: every session file of a space with its status and, where known, its
 * message count. The scan decides the status (one stat a file); settled and live files are then parsed to
 * count their messages, and consolidated ones take the count from the ledger without being opened.
 */
import { resolve } from 'node:path';
import type { Config, Space } from '../config/schema.js';
import { inspectSpaceDetailed } from '../consolidation/inspect.js';
import { TranscriptError, errorMessage } from '../errors.js';
import { createLedgerLookup, readLedger } from '../space/index.js';
import { locateSessionFile, readSessionFile, type ScanEntry } from '../transcripts/index.js';
import type { SessionStatus } from '../transcripts/types.js';

/** One row of `sessions list --json`. */
export interface SessionRow {
  readonly space: string;
  /** File name inside the sessions directory (its path under it, for Codex's dated folders). */
  readonly file: string;
  /** Absolute path of the file. */
  readonly path: string;
  readonly sessionId: string | null;
  readonly status: SessionStatus;
  /** Why a broken file is broken (`invalid-json`, `too-big`, …); null otherwise. */
  readonly reason: string | null;
  /** The full message of a broken file: path, what is wrong, what was done. */
  readonly message: string | null;
  /** Messages in the whole file; null when unknown (broken files). */
  readonly messages: number | null;
  /** Messages not consolidated yet; null when unknown. */
  readonly newMessages: number | null;
  /**
   * Lines and items of the file the reader left out of the messages, by why (Codex: `reasoning`, `injected
   * context`, `event_msg` …); null when the file was not read or its format does not count them.
   */
  readonly dropped: Readonly<Record<string, number>> | null;
  /**
   * Why the session is kept out of memory (`reason`: `command`, `marker` or `external-context`, and what was
   * seen or done); null when it is not.
   */
  readonly keptOut: { readonly reason: string; readonly detail: string } | null;
  /** Bytes. */
  readonly size: number;
  /** ISO time of the last modification. */
  readonly mtime: string;
}

/** A space whose sessions could not be listed at all (directory missing, unreadable ledger …). */
export interface SpaceListingError {
  readonly space: string;
  readonly message: string;
}

export interface SessionListing {
  readonly rows: SessionRow[];
  readonly errors: SpaceListingError[];
}

async function describeEntry(
  space: Space,
  entry: ScanEntry,
  config: Config,
  ledgerCount: (file: string) => number | undefined,
): Promise<SessionRow> {
  const base = {
    space: space.id,
    file: entry.file,
    path: resolve(space.sessionsDir, entry.file),
    sessionId: entry.sessionId ?? null,
    status: entry.status,
    reason: entry.reason ?? null,
    message: entry.message ?? null,
    messages: null,
    newMessages: null,
    dropped: null,
    keptOut: entry.keptOut === undefined ? null : { ...entry.keptOut },
    size: entry.size,
    mtime: new Date(entry.mtimeMs).toISOString(),
  };
  if (entry.status === 'broken') return base;
  // A kept-out file is never opened: what the ledger had of it before, if anything.
  if (entry.status === 'consolidated' || entry.status === 'kept-out') {
    const messages = ledgerCount(entry.file) ?? null;
    return { ...base, messages, newMessages: messages === null ? null : 0 };
  }
  try {
    const located = locateSessionFile(space, entry.file) ?? {
      format: space.format,
      sessionsDir: space.sessionsDir,
    };
    const { session } = await readSessionFile(entry.file, {
      format: located.format,
      sessionsDir: located.sessionsDir,
      fromMessage: entry.fromMessage,
      maxBytes: config.limits.maxSessionBytes,
    });
    return {
      ...base,
      sessionId: session.id,
      messages: session.messageCount,
      newMessages: Math.max(0, session.messageCount - entry.fromMessage),
      dropped: session.dropped ?? null,
    };
  } catch (error) {
    // The scan did not open the file; reading it shows it cannot be consolidated as it is.
    return {
      ...base,
      status: 'broken',
      reason: error instanceof TranscriptError ? error.reason : 'unreadable',
      message: errorMessage(error),
    };
  }
}

/** Lists the sessions of each space. Never throws for one bad file or one bad space. */
export async function listSessions(
  config: Config,
  spaces: readonly Space[],
  now: () => Date = () => new Date(),
): Promise<SessionListing> {
  const rows: SessionRow[] = [];
  const errors: SpaceListingError[] = [];
  for (const space of spaces) {
    const { inspection, scan } = await inspectSpaceDetailed(space, { config, now });
    if (scan === undefined) {
      errors.push({
        space: space.id,
        message: `space "${space.id}": ${inspection.error ?? 'cannot be listed'}`,
      });
      continue;
    }
    const ledger = createLedgerLookup(await readLedger(space.memoryDir));
    const ledgerCount = (file: string): number | undefined => ledger.getByFile(file)?.messageCount;
    for (const entry of scan.entries) rows.push(await describeEntry(space, entry, config, ledgerCount));
  }
  return { rows, errors };
}

/** How many rows are in each status, and the messages and bytes they hold. */
export function sessionTotals(rows: readonly SessionRow[]): Record<SessionStatus, number> & {
  sessions: number;
  messages: number;
  bytes: number;
} {
  const totals = {
    sessions: rows.length,
    settled: 0,
    live: 0,
    consolidated: 0,
    broken: 0,
    'kept-out': 0,
    messages: 0,
    bytes: 0,
  };
  for (const row of rows) {
    totals[row.status] += 1;
    totals.messages += row.messages ?? 0;
    totals.bytes += row.size;
  }
  return totals;
}
