import { z } from 'zod';
import { TranscriptErrorReason } from '../errors.js';
import type { MessagePart, Session, SessionMessage } from './types.js';
import { MessageContent, SessionId, describeZodError } from './message-schema.js';
import { DEFAULT_PART_CAPS, blocksToParts, type PartCaps } from './normalize-message.js';
import { JsonTextError, parseJsonText } from './parse-json-text.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * Pure part of the Claude Code JSONL reader: lines go in one at a time (the IO edge streams them), a
 * Session comes out. Only `user` and `assistant` lines become messages; every other line type (`summary`,
 * `system` incl. `compact_boundary`, `progress`, `file-history-snapshot`, `queue-operation`, and types that
 * future versions add) is skipped. Assistant lines that share `message.id` are one API message that Claude
 * Code wrote block by block: they are joined into one message, at the position of the first line.
 */

/** A conversation line as Claude Code writes it; other fields (cwd, uuid, usage, toolUseResult…) are ignored. */
const ConversationLine = z.looseObject({
  type: z.enum(['user', 'assistant']),
  message: z.looseObject({
    role: z.string().optional(),
    id: z.string().optional(),
    model: z.string().optional(),
    content: MessageContent,
  }),
  timestamp: z.string().optional(),
  sessionId: z.string().optional(),
  isSidechain: z.boolean().optional(),
  isMeta: z.boolean().optional(),
  isCompactSummary: z.boolean().optional(),
});
type ConversationLine = z.infer<typeof ConversationLine>;

/** Line types known to carry nothing for memory: skipped without a warning. */
const SILENT_TYPES: ReadonlySet<string> = new Set([
  'summary',
  'system',
  'progress',
  'file-history-snapshot',
  'queue-operation',
  'custom-title',
  'tag',
]);

/** Model name of the placeholder answers Claude Code writes itself (e.g. "No response requested."). */
const SYNTHETIC_MODEL = '<synthetic>';

/** User lines that only echo a local slash command or its output (`/exit`, `/clear`…). */
const LOCAL_COMMAND_ECHO =
  /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>/;

interface MessageBuilder {
  readonly index: number;
  readonly role: 'user' | 'assistant';
  readonly ts: string | undefined;
  readonly parts: MessagePart[];
  readonly sidechain: boolean;
  readonly compactSummary: boolean;
  readonly meta: boolean;
}

/** What the accumulator needs from the IO edge. */
export interface ClaudeCodeContext {
  /** Absolute path, for `Session.file` and error messages. */
  readonly file: string;
  /** File name without `.jsonl`: the session id when no line carries `sessionId`. */
  readonly stem: string;
  /** First message index to keep (earlier ones are counted, not kept). */
  readonly fromMessage: number;
  /**
   * How much of each part is kept (see `PartCaps`), applied as each line is added, so a line's big strings
   * are garbage as soon as the line is done. Default `DEFAULT_PART_CAPS`.
   */
  readonly caps?: PartCaps | undefined;
}

/** Feeds lines of one Claude Code transcript; `finish` returns the Session or throws a TranscriptError. */
export interface ClaudeCodeAccumulator {
  /** One line of the file, without its newline; `lineNumber` is 1-based. */
  addLine(line: string, lineNumber: number): void;
  /** The session; `mtime` is `startedAt` when no line has a timestamp. */
  finish(mtime: Date): Session;
}

/** Starts reading one Claude Code transcript. */
export function createClaudeCodeAccumulator(context: ClaudeCodeContext): ClaudeCodeAccumulator {
  const warnings: string[] = [];
  const caps = context.caps ?? DEFAULT_PART_CAPS;
  const kept: MessageBuilder[] = [];
  /** `message.id` of each assistant message seen, to its builder (undefined when before `fromMessage`). */
  const byMessageId = new Map<string, MessageBuilder | undefined>();
  const unknownTypes = new Set<string>();
  let messageCount = 0;
  let parsedLines = 0;
  let firstBadLine: string | undefined;
  let sessionId: string | undefined;
  let hasSeenSessionId = false;
  let version: string | undefined;
  let firstTimestamp: string | undefined;

  function addConversation(line: ConversationLine, lineNumber: number): void {
    const where = `line ${lineNumber}`;
    const messageId = line.type === 'assistant' ? line.message.id : undefined;
    if (messageId !== undefined && byMessageId.has(messageId)) {
      const builder = byMessageId.get(messageId);
      if (builder !== undefined)
        builder.parts.push(...blocksToParts(line.message.content, where, warnings, caps));
      return;
    }
    const index = messageCount;
    messageCount += 1;
    if (index < context.fromMessage) {
      if (messageId !== undefined) byMessageId.set(messageId, undefined);
      return;
    }
    const content = line.message.content;
    const isLocalCommandEcho =
      line.type === 'user' && typeof content === 'string' && LOCAL_COMMAND_ECHO.test(content);
    const builder: MessageBuilder = {
      index,
      role: line.type,
      ts: line.timestamp,
      parts: blocksToParts(content, where, warnings, caps),
      sidechain: line.isSidechain === true,
      compactSummary: line.isCompactSummary === true,
      meta: line.isMeta === true || line.message.model === SYNTHETIC_MODEL || isLocalCommandEcho,
    };
    kept.push(builder);
    if (messageId !== undefined) byMessageId.set(messageId, builder);
  }

  function addLine(text: string, lineNumber: number): void {
    if (text.trim().length === 0) return;
    let value: unknown;
    try {
      value = parseJsonText(text);
    } catch (error) {
      const detail = error instanceof JsonTextError ? error.detail : String(error);
      const warning = `line ${lineNumber}: invalid JSON (${detail}), skipped`;
      firstBadLine ??= warning;
      warnings.push(warning);
      return;
    }
    parsedLines += 1;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      warnings.push(`line ${lineNumber}: not a JSON object, skipped`);
      return;
    }
    const record = value as Record<string, unknown>;
    if (!hasSeenSessionId && typeof record.sessionId === 'string') {
      hasSeenSessionId = true;
      if (SessionId.safeParse(record.sessionId).success) sessionId = record.sessionId;
      else warnings.push(`line ${lineNumber}: sessionId is not a usable id; the file name is used instead`);
    }
    if (version === undefined && typeof record.version === 'string') version = record.version;
    const type = record.type;
    if (type !== 'user' && type !== 'assistant') {
      const name = typeof type === 'string' ? type : '(none)';
      if (!SILENT_TYPES.has(name) && !unknownTypes.has(name)) {
        unknownTypes.add(name);
        warnings.push(`line ${lineNumber}: line type "${name}" is not known, skipped (and any more of it)`);
      }
      return;
    }
    const parsed = ConversationLine.safeParse(record);
    if (!parsed.success) {
      warnings.push(
        `line ${lineNumber}: ${type} line of unexpected shape (${describeZodError(parsed.error)}), skipped`,
      );
      return;
    }
    if (
      firstTimestamp === undefined &&
      parsed.data.timestamp !== undefined &&
      !Number.isNaN(Date.parse(parsed.data.timestamp))
    ) {
      firstTimestamp = parsed.data.timestamp;
    }
    addConversation(parsed.data, lineNumber);
  }

  function finish(mtime: Date): Session {
    if (parsedLines === 0) {
      if (firstBadLine !== undefined) {
        throw transcriptFailure(
          context.file,
          TranscriptErrorReason.invalidJson,
          `no line is valid JSON (${firstBadLine})`,
        );
      }
      throw transcriptFailure(
        context.file,
        TranscriptErrorReason.empty,
        'the file is empty (only whitespace)',
      );
    }
    const messages: SessionMessage[] = kept.map((builder) => ({
      index: builder.index,
      role: builder.role,
      ts: builder.ts,
      parts: builder.parts,
      ...(builder.sidechain ? { sidechain: true } : {}),
      ...(builder.compactSummary ? { compactSummary: true } : {}),
      ...(builder.meta ? { meta: true } : {}),
    }));
    return {
      id: sessionId ?? context.stem,
      file: context.file,
      format: 'claude-code',
      startedAt: firstTimestamp ?? mtime.toISOString(),
      endedAt: undefined,
      agent: version === undefined ? 'claude-code' : `claude-code ${version}`,
      messages,
      messageCount,
      warnings,
    };
  }

  return { addLine, finish };
}
