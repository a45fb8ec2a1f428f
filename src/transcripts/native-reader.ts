import { TranscriptErrorReason } from '../errors.js';
import type { Session, SessionMessage } from './types.js';
import { NativeFile, NativeMessage, describeZodError } from './message-schema.js';
import { plainNativeMessage } from './native-message-fast-path.js';
import { NativeJsonStream, type NativeStreamEnd } from './native-stream.js';
import {
  DEFAULT_PART_CAPS,
  blocksDroppedWarning,
  dropBlocksOverLimit,
  nativeMessageParts,
  type PartCaps,
} from './normalize-message.js';
import { JsonTextError, parseJsonText } from './parse-json-text.js';
import { transcriptFailure } from './transcript-failure.js';
import { createKeepWindow, keptUntilOf } from './keep-window.js';
import { createKeepOutCollector, keepOutOf, observeRawMessage } from './keep-out-signals.js';

/** What the native parser needs besides the text; all of it comes from the caller's IO. */
export interface NativeParseContext {
  /** Absolute path, for `Session.file` and error messages. */
  readonly file: string;
  /** File name without `.json`: the session id when the file has no `id`. */
  readonly stem: string;
  /** First message index to return (earlier ones are counted, not converted). */
  readonly fromMessage: number;
  /** Characters of messages kept before later ones are only counted (see `KeepWindow`). Default: all. */
  readonly keepChars?: number | undefined;
  /** The file's modification time: `startedAt` when neither the file nor a message says. */
  readonly mtime: Date;
  /** How much of each part is kept (see `PartCaps`). Default `DEFAULT_PART_CAPS`. */
  readonly caps?: PartCaps | undefined;
}

/**
 * Parses the text of a native transcript (`{ id?, startedAt?, endedAt?, agent?, messages }`) into a Session.
 * Only messages with index >= `fromMessage` are validated and converted; `messageCount` counts them all.
 * Plain messages pass a hand-written check (`plainNativeMessage`); the others go through the zod schema.
 * Throws a TranscriptError (`invalid-json`, `wrong-shape`, `empty`). Pure.
 */
export function parseNativeTranscript(text: string, context: NativeParseContext): Session {
  const { file } = context;
  if (text.trim().length === 0) {
    throw transcriptFailure(file, TranscriptErrorReason.empty, 'the file is empty (only whitespace)');
  }
  let value: unknown;
  try {
    value = parseJsonText(text);
  } catch (error) {
    throw invalidJson(file, error);
  }
  const parsedFile = NativeFile.safeParse(value);
  if (!parsedFile.success) {
    throw transcriptFailure(file, TranscriptErrorReason.wrongShape, describeZodError(parsedFile.error, []));
  }
  const assembler = createNativeAssembler(context);
  for (const raw of parsedFile.data.messages) assembler.message(raw);
  return assembler.finish(parsedFile.data);
}

/**
 * Reads a native transcript as a stream of decoded text chunks (see `NativeJsonStream`), for files too big
 * to parse whole: each message is converted (and cut to the caps) as soon as its text has arrived, so
 * memory holds the Session being built and one message, not the file. Same Session and same errors as
 * `parseNativeTranscript` of the whole text, except that an error is met in reading order (a syntax error
 * early in the file is reported before a nesting too deep later on). Throws a TranscriptError.
 */
export async function parseNativeTranscriptStream(
  chunks: AsyncIterable<string>,
  context: NativeParseContext,
): Promise<Session> {
  const { file } = context;
  const assembler = createNativeAssembler(context);
  /** The top-level members as `JSON.parse` would build them (the last of a repeated key wins). */
  const members = new Map<string, unknown>();
  let document: unknown;
  let isObject = true;
  const stream = new NativeJsonStream({
    member(key, value) {
      members.set(key, value);
      if (key === 'messages') assembler.reset();
    },
    messagesStart() {
      members.set('messages', []);
      assembler.reset();
    },
    message(value) {
      assembler.message(value);
    },
    document(value) {
      isObject = false;
      document = value;
    },
  });
  let end: NativeStreamEnd;
  try {
    for await (const chunk of chunks) stream.write(chunk);
    end = stream.end();
  } catch (error) {
    if (!(error instanceof JsonTextError)) throw error;
    throw invalidJson(file, error);
  }
  if (end === 'empty') {
    throw transcriptFailure(file, TranscriptErrorReason.empty, 'the file is empty (only whitespace)');
  }
  // Built with own data properties only, as JSON.parse does (a "__proto__" key stays a key).
  const value = isObject ? Object.fromEntries(members) : document;
  const parsedFile = NativeFile.safeParse(value);
  if (!parsedFile.success) {
    throw transcriptFailure(file, TranscriptErrorReason.wrongShape, describeZodError(parsedFile.error, []));
  }
  return assembler.finish(parsedFile.data);
}

function invalidJson(file: string, error: unknown): Error {
  const detail = error instanceof JsonTextError ? error.message : String(error);
  return transcriptFailure(file, TranscriptErrorReason.invalidJson, `invalid JSON: ${detail}`, error);
}

/** Turns messages, given one at a time in file order, into a Session; shared by the whole and streamed paths. */
interface NativeAssembler {
  /** The next raw message of the file. */
  message(raw: unknown): void;
  /** Forget the messages so far (a repeated `messages` key: the last one counts). */
  reset(): void;
  /**
   * The Session, once the top level is known valid: a message of the wrong shape is reported only now,
   * so a wrong top level is reported first, as when the whole file is checked before its messages.
   */
  finish(data: NativeFile): Session;
}

function createNativeAssembler(context: NativeParseContext): NativeAssembler {
  const { file } = context;
  const caps = context.caps ?? DEFAULT_PART_CAPS;
  let warnings: string[] = [];
  let messages: SessionMessage[] = [];
  let window = createKeepWindow(context.fromMessage, context.keepChars);
  let count = 0;
  let firstTimestamp: string | undefined;
  let failure: Error | undefined;
  let keepOut = createKeepOutCollector();
  return {
    message(raw) {
      const index = count;
      count += 1;
      if (index === 0) firstTimestamp = messageTimestamp(raw);
      // Every message, kept or not: a session is kept out whole (keep-out-signals.ts).
      observeRawMessage(keepOut, index, raw, true);
      if (!window.keeps(index) || failure !== undefined) return;
      const dropped = dropBlocksOverLimit(raw, caps.blocksPerMessage);
      if (dropped > 0)
        warnings.push(blocksDroppedWarning(`messages.${index}`, dropped, caps.blocksPerMessage));
      const message = plainNativeMessage(raw) ?? validateMessage(raw, file, index);
      if (message instanceof Error) {
        failure = message;
        return;
      }
      const { role, parts } = nativeMessageParts(message, `messages.${index}`, warnings, caps);
      messages.push({ index, role, ts: message.ts, parts });
      window.kept(index, parts);
    },
    reset() {
      warnings = [];
      messages = [];
      window = createKeepWindow(context.fromMessage, context.keepChars);
      count = 0;
      firstTimestamp = undefined;
      failure = undefined;
      keepOut = createKeepOutCollector();
    },
    finish(data) {
      if (failure !== undefined) throw failure;
      const signals = keepOut.signals();
      return {
        id: data.id ?? context.stem,
        file,
        format: 'native',
        startedAt: data.startedAt ?? firstTimestamp ?? context.mtime.toISOString(),
        endedAt: data.endedAt ?? undefined,
        agent: data.agent ?? undefined,
        messages,
        messageCount: count,
        ...keptUntilOf(window, count),
        warnings,
        ...keepOutOf(signals),
      };
    },
  };
}

/** The zod schema's verdict on a message the fast path left to it: the message, or the error to report. */
function validateMessage(raw: unknown, file: string, index: number): NativeMessage | Error {
  const parsed = NativeMessage.safeParse(raw);
  if (!parsed.success) {
    return transcriptFailure(
      file,
      TranscriptErrorReason.wrongShape,
      describeZodError(parsed.error, ['messages', index]),
    );
  }
  return parsed.data;
}

/** The first message's `ts` when it is a valid timestamp: the session's start when the file has none. */
function messageTimestamp(first: unknown): string | undefined {
  if (typeof first !== 'object' || first === null || !('ts' in first)) return undefined;
  const ts = first.ts;
  return typeof ts === 'string' && !Number.isNaN(Date.parse(ts)) ? ts : undefined;
}
