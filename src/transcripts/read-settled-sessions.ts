import { realpath } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { resolve } from 'node:path';
import { TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import type { LedgerLookup } from '../core/ledger.js';
import type { KeptOutMark } from '../core/kept-out.js';
import type { Session } from './types.js';
import { fetchSessionFile, type FetchedSession, type ReadCapsOptions } from './read-session.js';
import type { ScanEntry, ScanResult } from './scan-sessions.js';
import { transcriptFailure } from './transcript-failure.js';
import { partsChars } from './keep-window.js';
import { locateSessionFile } from './session-sources.js';

/** A file that could not be read, set aside while the others go on. */
export interface SessionProblem {
  /** Path relative to the sessions directory. */
  readonly file: string;
  readonly reason: TranscriptErrorReason;
  /** Full message: path, what is wrong, what to do. */
  readonly message: string;
}

/**
 * One settled file that was read. The consolidator records these in the ledger once the memory they fed is
 * on disk, including those with `newMessages` 0, so that an unchanged file is not read again next tick.
 */
export interface ReadSessionRecord {
  readonly sessionId: string;
  /** Path relative to the sessions directory. */
  readonly file: string;
  /** Bytes of the file when it was read. */
  readonly size: number;
  /** Modification time when it was read, ms since the epoch. */
  readonly mtimeMs: number;
  /** Messages in the whole file: the ledger's next `messageCount`. */
  readonly messageCount: number;
  /** Messages read past the ledger's `messageCount`; 0 means the session counts as consolidated. */
  readonly newMessages: number;
}

/** What `readSettledSessions` found. */
export interface SettledSessions {
  /**
   * Sessions with at least one new message, holding only the new ones (empty when `onSession` takes them).
   */
  readonly sessions: Session[];
  /** Every settled file read, with or without new messages. */
  readonly records: ReadSessionRecord[];
  /** Broken files: those the scan found, and those that failed now. */
  readonly problems: SessionProblem[];
  /**
   * Settled sessions not read because `keepChars` was spent (their ids, or their files where the scan does not
   * know the id before reading): they wait, whole, for the next run.
   */
  readonly unread: string[];
  /**
   * Sessions read and then kept out by `keepOut` (the person's marker, a web or MCP tool): not recorded, not
   * handed on, their messages never kept.
   */
  readonly keptOut: { readonly sessionId: string; readonly file: string; readonly mark: KeptOutMark }[];
}

/** Inputs of `readSettledSessions`; the read-time caps (`ReadCapsOptions`) apply to every file read. */
export interface ReadSettledOptions extends ReadCapsOptions {
  readonly ledger: LedgerLookup;
  /** Largest transcript read, in bytes (limits.maxSessionBytes). */
  readonly maxBytes: number;
  /** Stop after this many sessions with new messages (the rest wait for the next run). Default: all. */
  readonly maxSessions?: number | undefined;
  /**
   * Characters of messages kept over all the sessions read (see keep-window.ts): once they are spent, a
   * session is cut (its `keptUntil` says where the next run goes on) and the sessions after it are not read
   * (they wait, whole, for the next run). Default: every message of every file.
   */
  readonly keepChars?: number | undefined;
  /**
   * Takes each session with new messages as soon as it is read, while the next files are fetched, instead of
   * `sessions` (then empty): the caller keeps what it needs of a session and lets the rest go, so a run never
   * holds every transcript it read at once, and its work on one (the digest) overlaps the wait on the next.
   */
  readonly onSession?: ((session: Session) => void) | undefined;
  /**
   * Whether a session just read is kept out of memory (by what its reader saw in the whole file:
   * `Session.keepOut`). A session kept out goes to `keptOut` and nowhere else. Omitted: none is.
   */
  readonly keepOut?: ((session: Session) => KeptOutMark | undefined) | undefined;
}

/**
 * Files fetched ahead of the one being parsed: while one file is parsed and digested, the next ones are
 * opened, read and re-stat'ed. A file over `SYNC_READ_MAX_BYTES` takes a round trip through libuv's thread
 * pool (four at once by default) for each of those, which then overlap the work on the file before it; a
 * small one is read synchronously when its fetch starts, and read-ahead only holds its bytes a little early.
 */
const READ_AHEAD_FILES = 4;

/**
 * Bytes the files fetched ahead may come to (by the scan's sizes), so read-ahead never holds much more than
 * the file being parsed: a native file over 8 MiB is streamed and holds no bytes before its parse, but it
 * still counts here.
 */
const READ_AHEAD_BYTES = 16 * 1024 * 1024;

/**
 * Most milliseconds the reading holds the event loop before it lets timers and sockets run (a run's lock
 * heartbeat, the daemon's API): a small file is read with synchronous calls (see `SYNC_READ_MAX_BYTES`), and
 * parsing and digesting it (`onSession`) is synchronous too, so without this a run of many files would not
 * yield until the last one.
 */
const HOLD_EVENT_LOOP_MS = 10;

/**
 * Starts the fetches of `entries` ahead of the one taken: at most `READ_AHEAD_FILES` at once and
 * `READ_AHEAD_BYTES` between them (the taken one always starts). A fetch that fails before it is taken is
 * held, not reported: `take` throws it, and one never taken (the keep budget ran out) is dropped.
 */
function readAhead(
  entries: readonly ScanEntry[],
  fetch: (entry: ScanEntry) => Promise<FetchedSession>,
): { take: (index: number) => Promise<FetchedSession> } {
  const started = new Map<number, Promise<FetchedSession>>();
  let next = 0;
  let bytes = 0;
  return {
    take(index) {
      next = Math.max(next, index);
      while (
        next < entries.length &&
        (next === index ||
          (started.size < READ_AHEAD_FILES && bytes + entries[next]!.size <= READ_AHEAD_BYTES))
      ) {
        const fetching = fetch(entries[next]!);
        fetching.catch(() => undefined);
        started.set(next, fetching);
        bytes += entries[next]!.size;
        next += 1;
      }
      const fetching = started.get(index)!;
      started.delete(index);
      bytes -= entries[index]!.size;
      return fetching;
    },
  };
}

/**
 * Ids already taken by files of this scan that are not read now (consolidated, live, known settled), by file;
 * the scan's broken files go to `problems`.
 */
function knownOwners(
  scan: ScanResult,
  ledger: LedgerLookup,
  problems: SessionProblem[],
): Map<string, string> {
  const owners = new Map<string, string>();
  for (const entry of scan.entries) {
    if (entry.sessionId !== undefined && entry.status !== 'broken') {
      const ledgerFile = ledger.get(entry.sessionId)?.file;
      if (!owners.has(entry.sessionId) || ledgerFile === entry.file) owners.set(entry.sessionId, entry.file);
    }
    if (entry.status === 'broken') {
      problems.push({
        file: entry.file,
        reason: entry.reason ?? TranscriptErrorReason.unreadable,
        message: entry.message ?? `${resolve(scan.sessionsDir, entry.file)}: broken`,
      });
    }
  }
  return owners;
}

/** Fetches a scanned file from the source that holds it; each source's folder is resolved once. */
function createFetcher(scan: ScanResult, maxBytes: number): (entry: ScanEntry) => Promise<FetchedSession> {
  // Resolved once for every file of the scan; a directory that cannot be resolved is reported by each read.
  const realFolders = new Map<string, Promise<string | undefined>>();
  const realFolder = (folder: string): Promise<string | undefined> => {
    let real = realFolders.get(folder);
    if (real === undefined) {
      real = realpath(folder).catch(() => undefined);
      realFolders.set(folder, real);
    }
    return real;
  };
  return async (entry) => {
    const located = locateSessionFile(scan, entry.file);
    if (located === undefined) {
      throw transcriptFailure(
        resolve(entry.file),
        TranscriptErrorReason.outsideDirectory,
        'no source of the space holds this file any longer',
      );
    }
    return fetchSessionFile(located.path, {
      format: located.format,
      sessionsDir: located.sessionsDir,
      realSessionsDir: await realFolder(located.sessionsDir),
      maxBytes,
    });
  };
}

/** What the reading of the settled files has found so far, and what is left of the keep budget. */
interface SettledReading extends SettledSessions {
  readonly owners: Map<string, string>;
  keepChars: number;
  /** Sessions with new messages so far, in `sessions` or handed to `onSession`. */
  withNew: number;
}

/**
 * Reads one settled file: recorded, kept out, or a problem. Returns the session for `onSession` when it has new
 * messages and `onSession` takes them (called by the loop once the file's errors are handled).
 */
async function readSettledFile(
  reading: SettledReading,
  options: ReadSettledOptions,
  path: string,
  entry: ScanEntry,
  take: () => Promise<FetchedSession>,
): Promise<Session | undefined> {
  try {
    const parse = await take();
    const { session, size, mtimeMs } = await parse({
      fromMessage: entry.fromMessage,
      keepChars: reading.keepChars,
      maxPartChars: options.maxPartChars,
      maxToolResultChars: options.maxToolResultChars,
      maxToolInputChars: options.maxToolInputChars,
      maxBlocksPerMessage: options.maxBlocksPerMessage,
    });
    const owner = reading.owners.get(session.id);
    if (owner !== undefined && owner !== entry.file) {
      throw transcriptFailure(
        path,
        TranscriptErrorReason.duplicateId,
        `session id "${session.id}" is already used by ${owner}`,
      );
    }
    reading.owners.set(session.id, entry.file);
    const mark = options.keepOut?.(session);
    if (mark !== undefined) {
      reading.keptOut.push({ sessionId: session.id, file: entry.file, mark });
      return undefined;
    }
    const newMessages = session.messages.length;
    reading.records.push({
      sessionId: session.id,
      file: entry.file,
      size,
      mtimeMs,
      messageCount: session.messageCount,
      newMessages,
    });
    let accepted: Session | undefined;
    if (newMessages > 0) {
      reading.withNew += 1;
      if (options.onSession === undefined) reading.sessions.push(session);
      else accepted = session;
    }
    if (Number.isFinite(reading.keepChars))
      for (const message of session.messages) reading.keepChars -= partsChars(message.parts);
    return accepted;
  } catch (error) {
    const failure =
      error instanceof TranscriptError
        ? error
        : transcriptFailure(
            path,
            TranscriptErrorReason.unreadable,
            `reading failed (${errorMessage(error)})`,
            error,
          );
    reading.problems.push({ file: entry.file, reason: failure.reason, message: failure.message });
    return undefined;
  }
}

/**
 * Reads the settled files of a scan, each from its ledger `messageCount` on (incremental reading). Never
 * throws for a file: failures, and a session id that another present file already has (`duplicate-id`),
 * go to `problems`. A file with no message past the ledger is left out of `sessions` (it is consolidated).
 */
export async function readSettledSessions(
  scan: ScanResult,
  options: ReadSettledOptions,
): Promise<SettledSessions> {
  const problems: SessionProblem[] = [];
  const reading: SettledReading = {
    sessions: [],
    records: [],
    problems,
    unread: [],
    keptOut: [],
    owners: knownOwners(scan, options.ledger, problems),
    keepChars: options.keepChars ?? Number.POSITIVE_INFINITY,
    withNew: 0,
  };
  const settled = scan.entries.filter((entry) => entry.status === 'settled');
  const ahead = readAhead(settled, createFetcher(scan, options.maxBytes));
  let heldSince = performance.now();
  for (const [index, entry] of settled.entries()) {
    if (performance.now() - heldSince > HOLD_EVENT_LOOP_MS) {
      await yieldToEventLoop();
      heldSince = performance.now();
    }
    if (options.maxSessions !== undefined && reading.withNew >= options.maxSessions) break;
    if (reading.keepChars <= 0) {
      reading.unread.push(entry.sessionId ?? entry.file);
      continue;
    }
    const path = resolve(scan.sessionsDir, entry.file);
    const accepted = await readSettledFile(reading, options, path, entry, () => ahead.take(index));
    if (accepted !== undefined) options.onSession?.(accepted);
  }
  const { sessions, records, unread, keptOut } = reading;
  return { sessions, records, problems, unread, keptOut };
}
