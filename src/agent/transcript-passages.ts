/**
 * The passages of a space's transcripts for fused recall (see `recall-fusion.ts`): one passage per user or
 * assistant message of every session of every source the space reads (native, Claude Code, Codex folders),
 * with its session id and date, so a question whose answer was never made a fact still finds its session.
 *
 * Bounded in time and memory:
 * - files are listed as the scheduler's scan lists them (`scanSessions`: the format's extension, Codex's dated
 *   folders, a source's `repository` and `files`) and read through the same reader and checks as consolidation
 *   (`readSessionFile`: inside the folder, never a file over the byte cap);
 * - a file over {@link RECALL_SESSION_BYTES} (or the space's `limits.maxSessionBytes`, the lower) is never
 *   read, and once {@link RECALL_TOTAL_BYTES} have been read, newest files first, the older ones are skipped;
 * - each passage keeps the first {@link PASSAGE_CHARS} characters of its message;
 * - a file is read again only when its size or modification time changed: the cache is per source folder and
 *   shared by every recall of the process (an agent, the MCP server), so a second query reads nothing.
 *
 * Sessions kept out of memory stay out of recall: those `.dreamd/kept-out.json` lists, and those whose person
 * typed `#dreamd:ignore` (or, with `keepOut.externalContext`, that used a web or MCP tool).
 *
 * States of one source's cache: empty → filled (entries by file, each with its size and mtime) → refreshed
 * in place at every read (changed files read again, vanished files dropped). An index read while nothing
 * changed is the same object as the last one, so the search index built over it is reused.
 */
import path from 'node:path';
import type { SessionSource, Space } from '../config/schema.js';
import type { LedgerLookup } from '../core/ledger.js';
import type { KeptOutLookup } from '../core/kept-out.js';
import { keptOutLookup, readKeptOut } from '../space/kept-out.js';
import { readSessionFile } from '../transcripts/read-session.js';
import { scanSessions } from '../transcripts/scan-sessions.js';
import type { Session } from '../transcripts/types.js';

/** Largest transcript recall reads: 16 MiB (a long Claude Code session is a few MiB). */
export const RECALL_SESSION_BYTES = 16 * 1024 * 1024;
/**
 * Bytes of transcripts read for one index, newest files first: 128 MiB, a few seconds of parsing on the first
 * query and about a tenth of that in passages kept; older sessions past it are counted as skipped.
 */
export const RECALL_TOTAL_BYTES = 128 * 1024 * 1024;
/** Characters of a message kept as its passage: 1,500 (about 375 tokens), its head. */
export const PASSAGE_CHARS = 1_500;
/** Source folders whose cache is kept; the least recently read is dropped first. */
const CACHED_SOURCES = 32;

/** One message of a transcript, as recall searches and returns it. */
export interface TranscriptPassage {
  readonly sessionId: string;
  /** `YYYY-MM-DD`: the message's time, else the session's start. */
  readonly date: string;
  readonly role: 'user' | 'assistant';
  /** The message's index in its session. */
  readonly message: number;
  readonly text: string;
}

/** Everything recall holds of a space's transcripts. */
export interface TranscriptPassages {
  readonly passages: readonly TranscriptPassage[];
  /** Sessions read. */
  readonly sessions: number;
  /** Sessions not read: over the byte caps, broken, or kept out. */
  readonly skipped: number;
  /** False when no folder of the space could be listed: recall is then facts only. */
  readonly readable: boolean;
  /** Why folders could not be listed, one line each. */
  readonly problems: readonly string[];
}

/** Reads a space's transcript passages, again only what changed. */
export type TranscriptPassageSource = () => Promise<TranscriptPassages>;

export interface TranscriptPassagesOptions {
  readonly space: Pick<Space, 'id' | 'sessionsDir' | 'memoryDir' | 'format' | 'sources'>;
  /** The space's `limits.maxSessionBytes`; recall reads no file over it nor over {@link RECALL_SESSION_BYTES}. */
  readonly maxBytes: number;
  /** The config's `keepOut.externalContext`: sessions that used a web or MCP tool stay out. Default false, as the config's. */
  readonly externalContext?: boolean;
  /** Bytes read for one index. Default {@link RECALL_TOTAL_BYTES}. */
  readonly maxTotalBytes?: number;
}

/** The passages of one session: its user and assistant messages with text, each cut to {@link PASSAGE_CHARS}. */
export function transcriptPassagesOf(session: Session): TranscriptPassage[] {
  const passages: TranscriptPassage[] = [];
  for (const message of session.messages) {
    if (message.role !== 'user' && message.role !== 'assistant') continue;
    if (message.meta === true || message.compactSummary === true) continue;
    const text = message.parts
      .flatMap((part) => (part.kind === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
    if (text === '') continue;
    passages.push({
      sessionId: session.id,
      date: (message.ts ?? session.startedAt).slice(0, 10),
      role: message.role,
      message: message.index,
      text: text.length > PASSAGE_CHARS ? `${text.slice(0, PASSAGE_CHARS)}…` : text,
    });
  }
  return passages;
}

interface CachedFile {
  readonly size: number;
  readonly mtimeMs: number;
  readonly sessionId: string | undefined;
  /** Undefined: read and skipped (broken, or kept out by what it holds). */
  readonly passages: readonly TranscriptPassage[] | undefined;
}

const caches = new Map<string, Map<string, CachedFile>>();

function cacheOf(key: string): Map<string, CachedFile> {
  const cache = caches.get(key) ?? new Map<string, CachedFile>();
  caches.delete(key);
  caches.set(key, cache);
  if (caches.size > CACHED_SOURCES) caches.delete(caches.keys().next().value!);
  return cache;
}

const NO_LEDGER: LedgerLookup = { get: () => undefined, getByFile: () => undefined };

/** The folders a space reads: its sources, else its one sessions folder. */
function sourcesOf(space: TranscriptPassagesOptions['space']): SessionSource[] {
  return space.sources === undefined
    ? [{ format: space.format, sessionsDir: space.sessionsDir }]
    : [...space.sources];
}

function sourceKey(source: SessionSource, maxBytes: number): string {
  return JSON.stringify([
    path.resolve(source.sessionsDir),
    source.format,
    source.repository ?? null,
    source.files ?? null,
    maxBytes,
  ]);
}

/** A transcript file a scan listed, with the source it is in and that source's cache. */
interface FoundFile {
  readonly file: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly source: SessionSource;
  readonly cache: Map<string, CachedFile>;
}

/**
 * Lists every source folder of the space as the scheduler's scan does, dropping the cache entries of files gone.
 * Broken and kept-out files are counted as skipped; a folder that cannot be listed is a problem.
 */
async function listSources(
  options: TranscriptPassagesOptions,
  maxBytes: number,
  keptOut: KeptOutLookup,
): Promise<{ found: FoundFile[]; listed: number; skipped: number; problems: string[] }> {
  const found: FoundFile[] = [];
  const problems: string[] = [];
  let listed = 0;
  let skipped = 0;
  for (const source of sourcesOf(options.space)) {
    const cache = cacheOf(sourceKey(source, maxBytes));
    const many = options.space.sources !== undefined;
    try {
      const scan = await scanSessions({
        space: {
          ...options.space,
          sessionsDir: source.sessionsDir,
          format: source.format,
          ...(many ? { sources: [source] } : {}),
        },
        ledger: NO_LEDGER,
        now: new Date(),
        quietMinutes: 0,
        maxBytes,
        keptOut,
      });
      listed += 1;
      const present = new Set<string>();
      for (const entry of scan.entries) {
        present.add(entry.file);
        if (entry.status === 'broken' || entry.status === 'kept-out') skipped += 1;
        else found.push({ file: entry.file, size: entry.size, mtimeMs: entry.mtimeMs, source, cache });
      }
      for (const file of cache.keys()) if (!present.has(file)) cache.delete(file);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  return { found, listed, skipped, problems };
}

/** A file's session id and passages; none when it is broken or kept out by what it holds. */
async function readPassages(
  entry: FoundFile,
  maxBytes: number,
  externalContext: boolean,
): Promise<Pick<CachedFile, 'sessionId' | 'passages'>> {
  try {
    const { session } = await readSessionFile(entry.file, {
      format: entry.source.format,
      sessionsDir: entry.source.sessionsDir,
      maxBytes,
    });
    const { marker, externalContext: external } = session.keepOut ?? {};
    const out = marker !== undefined || (external !== undefined && externalContext);
    return { sessionId: session.id, passages: out ? undefined : transcriptPassagesOf(session) };
  } catch {
    // A broken transcript has no passages; consolidation reports it, recall goes on.
    return { sessionId: undefined, passages: undefined };
  }
}

/**
 * The passages of the files, newest first, until the byte budget is spent; a file is read again only when its
 * size or mtime changed. Files over the budget, broken or kept out since they were read count as skipped.
 */
async function collectPassages(
  found: readonly FoundFile[],
  maxTotalBytes: number,
  keptOut: KeptOutLookup,
  read: (entry: FoundFile) => Promise<Pick<CachedFile, 'sessionId' | 'passages'>>,
): Promise<{ passages: TranscriptPassage[]; sessions: number; skipped: number }> {
  const passages: TranscriptPassage[] = [];
  let budget = maxTotalBytes;
  let sessions = 0;
  let skipped = 0;
  for (const entry of found) {
    if (entry.size > budget) {
      skipped += 1;
      continue;
    }
    budget -= entry.size;
    let cached = entry.cache.get(entry.file);
    if (cached === undefined || cached.size !== entry.size || cached.mtimeMs !== entry.mtimeMs) {
      cached = { size: entry.size, mtimeMs: entry.mtimeMs, ...(await read(entry)) };
      entry.cache.set(entry.file, cached);
    }
    // A session marked kept out since it was read (`dreamd sessions exclude`) leaves recall too.
    if (cached.passages === undefined || keptOut.get(entry.file, cached.sessionId) !== undefined) {
      skipped += 1;
      continue;
    }
    sessions += 1;
    passages.push(...cached.passages);
  }
  return { passages, sessions, skipped };
}

/** Passages of a space's transcripts, cached per source folder by file size and mtime. */
export function createTranscriptPassages(options: TranscriptPassagesOptions): TranscriptPassageSource {
  const maxBytes = Math.min(options.maxBytes, RECALL_SESSION_BYTES);
  const maxTotalBytes = options.maxTotalBytes ?? RECALL_TOTAL_BYTES;
  const externalContext = options.externalContext ?? false;
  let last: { readonly signature: string; readonly index: TranscriptPassages } | undefined;

  const refresh = async (): Promise<TranscriptPassages> => {
    let keptOut;
    let keptOutList;
    try {
      keptOutList = await readKeptOut(options.space.memoryDir);
      keptOut = keptOutLookup(keptOutList, { externalContext });
    } catch (error) {
      // Without the list of sessions kept out, no session can be shown safely.
      return {
        passages: [],
        sessions: 0,
        skipped: 0,
        readable: false,
        problems: [error instanceof Error ? error.message : String(error)],
      };
    }
    const { found, listed, skipped: unlisted, problems } = await listSources(options, maxBytes, keptOut);
    // Newest first: the byte budget keeps the recent sessions.
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : 1));
    const signature = JSON.stringify([
      keptOutList.sessions,
      found.map((entry) => [entry.file, entry.size, entry.mtimeMs]),
    ]);
    if (last !== undefined && last.signature === signature && problems.length === 0) return last.index;
    const { passages, sessions, skipped } = await collectPassages(found, maxTotalBytes, keptOut, (entry) =>
      readPassages(entry, maxBytes, externalContext),
    );
    const index = { passages, sessions, skipped: unlisted + skipped, readable: listed > 0, problems };
    last = { signature, index };
    return index;
  };

  // Two recalls at once share one pass over the folders.
  let current: Promise<TranscriptPassages> | undefined;
  return () => {
    current ??= refresh().finally(() => {
      current = undefined;
    });
    return current;
  };
}
