import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import type { TranscriptFormat } from '../config/schema.js';
import { ConfigError, TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import type { Session } from './types.js';
import { createClaudeCodeAccumulator } from './claude-code-lines.js';
import { createCodexAccumulator } from './codex-lines.js';
import { attachSubagents, isOldLayoutSubagentFile } from './claude-code-subagents.js';
import { parseNativeTranscript, parseNativeTranscriptStream } from './native-reader.js';
import type { PartCaps } from './normalize-message.js';
import {
  STREAM_CHUNK_BYTES,
  SYNC_READ_MAX_BYTES,
  createUtf8Check,
  decodeUtf8,
  readExactly,
  readExactlySync,
  streamLines,
} from './transcript-bytes.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * The transcript readers, one per format, in one table the compiler checks: `TRANSCRIPT_READERS` must have
 * a reader for every `TranscriptFormat` (`satisfies Record<TranscriptFormat, TranscriptReader>`), so a new
 * format in the config schema fails to compile until it has a reader, and a format no reader claims is an
 * error at run time too (`readerFor`), never a silent fallback to another format's reader.
 *
 * To add a format: add it to `TranscriptFormat` (config/schema.ts), then give it an entry here (its file
 * extension, whether its files say when they ended, its `fetch`); the scanner and `readSessionFile` use only
 * this table.
 */

/** One checked file, ready to read: it is a regular file inside the sessions directory, of `size` bytes. */
export interface TranscriptFileInput {
  /** The file's real path (symbolic links resolved), which is what is opened. */
  readonly realFile: string;
  /** The path shown in sessions and errors. */
  readonly path: string;
  /** File name without its extension: the session id when the file names none. */
  readonly stem: string;
  readonly size: number;
  readonly mtime: Date;
  readonly sessionsDir: string;
  readonly realSessionsDir: string | undefined;
  /** Largest file read, in bytes (limits.maxSessionBytes). */
  readonly maxBytes: number;
  /** Native files above this many bytes are parsed as a stream. */
  readonly streamNativeAboveBytes: number;
  /** Re-stat of the file; called once every byte of it was read, to tell a changed file from a broken one. */
  readonly statAfter: () => Promise<Stats | undefined>;
}

/**
 * What a read keeps of a file's messages. Given when the file is parsed, not when its bytes are fetched: the
 * keep budget of a run follows what the files before it kept (see `readSettledSessions`).
 */
export interface TranscriptParseInput {
  readonly fromMessage: number;
  /** Characters of messages kept before later ones are only counted (see keep-window.ts). */
  readonly keepChars: number | undefined;
  readonly caps: PartCaps;
}

/** The rest of a read begun by `TranscriptReader.fetch`: the parse, given what to keep. */
export type FetchedTranscript = (parse: TranscriptParseInput) => Promise<TranscriptFileOutput>;

/** What a reader found: the session or the failure (both undefined never), and the re-stat. */
export interface TranscriptFileOutput {
  readonly session: Session | undefined;
  readonly failure: unknown;
  readonly after: Stats | undefined;
}

export interface TranscriptReader {
  /** File extension of the format's session files (`.json`). */
  readonly extension: string;
  /**
   * True when a file says it has ended (native `endedAt`): the scanner parses a recently modified file to see
   * whether it has. False when the format has no end marker (Claude Code): a recent file is live.
   */
  readonly marksItsEnd: boolean;
  /**
   * True when session files sit in sub-folders of the sessions directory (Codex's `YYYY/MM/DD/`): the scanner
   * then lists the whole tree (never following a linked folder). False: only top-level files are sessions.
   */
  readonly nestedFolders: boolean;
  /** True for a file name of the format's extension that is still not a session (e.g. a sub-agent's file). */
  readonly isNotASession: (name: string) => boolean;
  /**
   * Begins reading a file with what needs no keep budget: a native file small enough to read whole has its
   * bytes read and the file re-stat'ed here, so a caller can fetch the next files while it parses this one
   * (read-ahead); a streamed format does all its reading in the parse, keeping its memory flat.
   */
  fetch(input: TranscriptFileInput): Promise<FetchedTranscript>;
}

/** The fetch of a format that reads everything as it parses (a stream): nothing is read before the parse. */
function streamedFetch(
  read: (input: TranscriptFileInput & TranscriptParseInput) => Promise<TranscriptFileOutput>,
): (input: TranscriptFileInput) => Promise<FetchedTranscript> {
  return (input) => Promise.resolve((parse) => read({ ...input, ...parse }));
}

/** Runs `read`, then the re-stat: the failure is kept, not thrown, so the caller compares the stats first. */
async function thenStat(
  input: Pick<TranscriptFileInput, 'statAfter'>,
  read: () => Promise<Session>,
): Promise<TranscriptFileOutput> {
  let session: Session | undefined;
  let failure: unknown;
  try {
    session = await read();
  } catch (error) {
    failure = error;
  }
  return { session, failure, after: await input.statAfter() };
}

/**
 * A native file small enough to read whole: the fetch is one read and the re-stat while the file closes
 * (with synchronous calls up to `SYNC_READ_MAX_BYTES`); the parse is one `JSON.parse` and the normalisation.
 */
async function fetchNativeWhole(input: TranscriptFileInput): Promise<FetchedTranscript> {
  const { realFile, path, size } = input;
  let read: Awaited<ReturnType<typeof readExactly<Stats | undefined>>>;
  try {
    read =
      size <= SYNC_READ_MAX_BYTES
        ? readExactlySync(realFile, size, path)
        : await readExactly(realFile, size, path, input.statAfter);
  } catch (error) {
    const after = await input.statAfter();
    return () => Promise.resolve({ session: undefined, failure: error, after });
  }
  const { buffer, after } = read;
  return (parse) => {
    let { failure } = read;
    let session: Session | undefined;
    if (buffer !== undefined) {
      try {
        session = parseNativeTranscript(decodeUtf8(buffer, path), {
          file: path,
          stem: input.stem,
          fromMessage: parse.fromMessage,
          keepChars: parse.keepChars,
          mtime: input.mtime,
          caps: parse.caps,
        });
      } catch (error) {
        failure = error;
      }
    }
    return Promise.resolve({ session, failure, after });
  };
}

/**
 * Streams a native transcript through the UTF-8 check into the streaming parser: memory holds one chunk,
 * one message and the Session, never the file. Opened with `fs/promises` `open`, as `readExactly` is.
 */
async function readNativeStreamed(input: TranscriptFileInput & TranscriptParseInput): Promise<Session> {
  const { realFile, path, size } = input;
  const handle = await open(realFile, 'r');
  try {
    const source = handle.createReadStream({
      start: 0,
      end: size - 1,
      highWaterMark: STREAM_CHUNK_BYTES,
      autoClose: false,
    });
    const check = createUtf8Check(path);
    let sourceFailure: Error | undefined;
    pipeline(source, check, (error) => {
      if (error) sourceFailure = error;
    });
    const chunks = (async function* textChunks(): AsyncGenerator<string> {
      for await (const chunk of check) yield chunk as string;
      if (sourceFailure !== undefined) throw sourceFailure;
    })();
    try {
      return await parseNativeTranscriptStream(chunks, {
        file: path,
        stem: input.stem,
        fromMessage: input.fromMessage,
        keepChars: input.keepChars,
        mtime: input.mtime,
        caps: input.caps,
      });
    } catch (error) {
      if (error instanceof TranscriptError) throw error;
      throw transcriptFailure(
        path,
        TranscriptErrorReason.unreadable,
        `reading failed (${errorMessage(error)})`,
        error,
      );
    } finally {
      source.destroy();
      check.destroy();
    }
  } finally {
    await handle.close();
  }
}

/**
 * Streams a JSONL transcript line by line into the Claude Code accumulator (never the whole file), re-stats
 * it, then reads the sub-agent files its results name (see claude-code-subagents.ts).
 */
async function readClaudeCode(
  input: TranscriptFileInput & TranscriptParseInput,
): Promise<TranscriptFileOutput> {
  const accumulator = createClaudeCodeAccumulator({
    file: input.path,
    stem: input.stem,
    fromMessage: input.fromMessage,
    keepChars: input.keepChars,
    caps: input.caps,
  });
  let failure: unknown;
  try {
    await streamLines(input.realFile, input.path, input.size, (line, lineNumber) =>
      accumulator.addLine(line, lineNumber),
    );
  } catch (error) {
    failure = error;
  }
  const after = await input.statAfter();
  if (failure !== undefined) return { session: undefined, failure, after };
  await attachSubagents(accumulator, {
    parentFile: input.path,
    stem: input.stem,
    sessionsDir: input.sessionsDir,
    realSessionsDir: input.realSessionsDir,
    maxBytes: input.maxBytes,
    caps: input.caps,
  });
  try {
    return { session: accumulator.finish(input.mtime), failure: undefined, after };
  } catch (error) {
    return { session: undefined, failure: error, after };
  }
}

/** Streams a Codex rollout line by line into the Codex accumulator (codex-lines.ts), then re-stats it. */
async function readCodex(input: TranscriptFileInput & TranscriptParseInput): Promise<TranscriptFileOutput> {
  const accumulator = createCodexAccumulator({
    file: input.path,
    stem: input.stem,
    fromMessage: input.fromMessage,
    keepChars: input.keepChars,
    caps: input.caps,
  });
  return thenStat(input, async () => {
    await streamLines(input.realFile, input.path, input.size, (line, lineNumber) =>
      accumulator.addLine(line, lineNumber),
    );
    return accumulator.finish(input.mtime);
  });
}

export const TRANSCRIPT_READERS = {
  native: {
    extension: '.json',
    marksItsEnd: true,
    nestedFolders: false,
    isNotASession: () => false,
    fetch: (input) =>
      input.size <= input.streamNativeAboveBytes
        ? fetchNativeWhole(input)
        : streamedFetch((whole) => thenStat(whole, () => readNativeStreamed(whole)))(input),
  },
  'claude-code': {
    extension: '.jsonl',
    marksItsEnd: false,
    nestedFolders: false,
    isNotASession: isOldLayoutSubagentFile,
    fetch: streamedFetch(readClaudeCode),
  },
  codex: {
    extension: '.jsonl',
    // A rollout is appended to turn by turn and never says it ended: a recent file is live.
    marksItsEnd: false,
    nestedFolders: true,
    isNotASession: () => false,
    fetch: streamedFetch(readCodex),
  },
} as const satisfies Record<TranscriptFormat, TranscriptReader>;

/** The reader of `format`; a ConfigError for a format no reader claims (a caller outside the type checker). */
export function readerFor(format: TranscriptFormat): TranscriptReader {
  const readers: Readonly<Record<string, TranscriptReader>> = TRANSCRIPT_READERS;
  const reader = Object.hasOwn(readers, format) ? readers[format] : undefined;
  if (reader === undefined) {
    throw new ConfigError(
      `no transcript reader for format "${String(format)}"; the formats are ${Object.keys(TRANSCRIPT_READERS).join(', ')}`,
      'format',
    );
  }
  return reader;
}
