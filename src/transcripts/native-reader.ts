import { TranscriptErrorReason } from '../errors.js';
import type { Session, SessionMessage } from './types.js';
import { NativeFile, NativeMessage, describeZodError } from './message-schema.js';
import { plainNativeMessage } from './native-message-fast-path.js';
import { nativeMessageParts } from './normalize-message.js';
import { JsonTextError, parseJsonText } from './parse-json-text.js';
import { transcriptFailure } from './transcript-failure.js';

/** What the native parser needs besides the text; all of it comes from the caller's IO. */
export interface NativeParseContext {
  /** Absolute path, for `Session.file` and error messages. */
  readonly file: string;
  /** File name without `.json`: the session id when the file has no `id`. */
  readonly stem: string;
  /** First message index to return (earlier ones are counted, not converted). */
  readonly fromMessage: number;
  /** The file's modification time: `startedAt` when neither the file nor a message says. */
  readonly mtime: Date;
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
    const detail = error instanceof JsonTextError ? error.message : String(error);
    throw transcriptFailure(file, TranscriptErrorReason.invalidJson, `invalid JSON: ${detail}`, error);
  }
  const parsedFile = NativeFile.safeParse(value);
  if (!parsedFile.success) {
    throw transcriptFailure(file, TranscriptErrorReason.wrongShape, describeZodError(parsedFile.error, []));
  }
  const data = parsedFile.data;
  const warnings: string[] = [];
  const messages: SessionMessage[] = [];
  data.messages.forEach((raw, index) => {
    if (index < context.fromMessage) return;
    const message = plainNativeMessage(raw) ?? validateMessage(raw, file, index);
    const { role, parts } = nativeMessageParts(message, `messages.${index}`, warnings);
    messages.push({ index, role, ts: message.ts, parts });
  });
  const firstTimestamp = firstMessageTimestamp(data.messages);
  return {
    id: data.id ?? context.stem,
    file,
    format: 'native',
    startedAt: data.startedAt ?? firstTimestamp ?? context.mtime.toISOString(),
    endedAt: data.endedAt ?? undefined,
    agent: data.agent ?? undefined,
    messages,
    messageCount: data.messages.length,
    warnings,
  };
}

/** The zod schema's verdict on a message the fast path left to it. */
function validateMessage(raw: unknown, file: string, index: number): NativeMessage {
  const parsed = NativeMessage.safeParse(raw);
  if (!parsed.success) {
    throw transcriptFailure(
      file,
      TranscriptErrorReason.wrongShape,
      describeZodError(parsed.error, ['messages', index]),
    );
  }
  return parsed.data;
}

function firstMessageTimestamp(messages: readonly unknown[]): string | undefined {
  const first = messages[0];
  if (typeof first !== 'object' || first === null || !('ts' in first)) return undefined;
  const ts = first.ts;
  return typeof ts === 'string' && !Number.isNaN(Date.parse(ts)) ? ts : undefined;
}
