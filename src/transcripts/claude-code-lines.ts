import { z } from 'zod';
import type { MessagePart, Session, SessionMessage, SubagentPart } from './types.js';
import { MessageContent, SessionId, describeZodError } from './message-schema.js';
import { blocksDroppedWarning, blocksToParts, dropBlocksOverLimit } from './normalize-message.js';
import {
  startLineReading,
  lineRecord,
  sessionHead,
  warnUnknownType,
  type LineReaderContext,
  type LineReading,
} from './line-reading.js';
import { noLineRead } from './transcript-failure.js';
import { keptUntilOf } from './keep-window.js';
import { keepOutOf, observeRawMessage } from './keep-out-signals.js';

/**
 * Pure part of the Claude Code JSONL reader: lines go in one at a time (the IO edge streams them), a
 * Session comes out. Only `user` and `assistant` lines become messages; every other line type (`summary`,
 * `system` incl. `compact_boundary`, `progress`, `file-history-snapshot`, `queue-operation`, and types that
 * future versions add) is skipped. Assistant lines that share `message.id` are one API message that Claude
 * Code wrote block by block: they are joined into one message, at the position of the first line.
 */

/** A conversation line as Claude Code writes it; other fields (cwd, uuid, usage, toolUseResult…) are ignored. */
export const ConversationLine = z.looseObject({
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
  /** What Claude Code recorded of a tool's result; for a sub-agent (`Task`) call it names the `agentId`. */
  toolUseResult: z.unknown().optional(),
});
export type ConversationLine = z.infer<typeof ConversationLine>;

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

/** User lines written by a slash command or a local command (`/exit`, `/review-pr 12`, its stdout…). */
const COMMAND_LINE =
  /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>/;
/** The arguments the user typed after a slash command. */
const COMMAND_ARGS = /<command-args>([\s\S]*?)<\/command-args>/;

/**
 * A user line that only echoes a local command or its output: `/exit` and its `Goodbye!`, `/clear`, a
 * command without arguments. A slash command typed with arguments (`/review-pr 12 we always squash`) is the
 * user's words: it is kept, and the digest shows it as `/review-pr 12 we always squash`. The prompt a
 * command expands to follows as its own `isMeta` line, written by the command file, not by the user.
 */
export function isLocalCommandEcho(content: ConversationLine['message']['content']): boolean {
  if (typeof content !== 'string' || !COMMAND_LINE.test(content)) return false;
  const args = COMMAND_ARGS.exec(content)?.[1];
  return args === undefined || args.trim() === '';
}

/** A sub-agent id as Claude Code writes it (`ab94da7`, `a1b2c3d4e5f6`): it names a file, so nothing else. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** The trailer Claude Code puts in a sub-agent's result: `agentId: ab94da7 (for resuming …)`. */
const AGENT_ID_TRAILER = /^agentId: ([A-Za-z0-9][A-Za-z0-9_-]{0,63})\b/;

/** A tool result of the main thread that a sub-agent gave: its `agentId` and the `Task` call it answers. */
export interface SubagentLink {
  /** Index of the (user) message that holds the result. */
  readonly messageIndex: number;
  readonly agentId: string;
  readonly toolCallId: string | undefined;
}

/** The sub-agent named by a tool-result line: `toolUseResult.agentId`, else the trailer in its text. */
function linkedAgent(
  line: ConversationLine,
): { agentId: string; toolCallId: string | undefined } | undefined {
  const content = line.message.content;
  if (!Array.isArray(content)) return undefined;
  const result = content.find((block) => block.type === 'tool_result');
  if (result === undefined || result.type !== 'tool_result') return undefined;
  const recorded = line.toolUseResult;
  if (typeof recorded === 'object' && recorded !== null && 'agentId' in recorded) {
    const agentId = recorded.agentId;
    if (typeof agentId === 'string' && AGENT_ID.test(agentId))
      return { agentId, toolCallId: result.tool_use_id };
  }
  if (!Array.isArray(result.content)) return undefined;
  for (const block of result.content) {
    const match =
      block.type === 'text' && block.text !== undefined ? AGENT_ID_TRAILER.exec(block.text) : null;
    if (match?.[1] !== undefined) return { agentId: match[1], toolCallId: result.tool_use_id };
  }
  return undefined;
}

interface MessageBuilder {
  readonly index: number;
  readonly role: 'user' | 'assistant';
  readonly ts: string | undefined;
  readonly parts: MessagePart[];
  readonly sidechain: boolean;
  readonly compactSummary: boolean;
  readonly meta: boolean;
}

/** What the accumulator needs from the IO edge (`line-reading.ts`). */
export type ClaudeCodeContext = LineReaderContext;

/** Feeds lines of one Claude Code transcript; `finish` returns the Session or throws a TranscriptError. */
export interface ClaudeCodeAccumulator {
  /** One line of the file, without its newline; `lineNumber` is 1-based. */
  addLine(line: string, lineNumber: number): void;
  /** The sub-agent results among the kept messages, in file order (their files are read by the IO edge). */
  subagentLinks(): readonly SubagentLink[];
  /** Adds what a sub-agent's own file holds to the message of its result (see `SubagentLink`). */
  attachSubagent(link: SubagentLink, part: SubagentPart): void;
  /** Adds a warning about this session (e.g. a sub-agent file that could not be read). */
  warn(warning: string): void;
  /** The session; `mtime` is `startedAt` when no line has a timestamp. */
  finish(mtime: Date): Session;
}

/** What the reading of one transcript has gathered so far; the functions below add to it line by line. */
interface ClaudeCodeReading extends LineReading {
  readonly kept: MessageBuilder[];
  /** `message.id` of each assistant message seen, to its builder (undefined when before `fromMessage`). */
  readonly byMessageId: Map<string, MessageBuilder | undefined>;
  readonly links: SubagentLink[];
  hasSeenSessionId: boolean;
}

/** Adds an assistant line's blocks to the message whose id it shares, within the message's block limit. */
function joinToMessage(
  reading: ClaudeCodeReading,
  builder: MessageBuilder,
  line: ConversationLine,
  where: string,
): void {
  const { caps, warnings } = reading;
  // The lines of one message share its block limit.
  const room = caps.blocksPerMessage - builder.parts.length;
  const parts = blocksToParts(line.message.content, where, warnings, caps);
  if (parts.length > room)
    warnings.push(blocksDroppedWarning(where, parts.length - room, caps.blocksPerMessage));
  builder.parts.push(...parts.slice(0, Math.max(0, room)));
}

/** A conversation line: joined to its message, or numbered as a new one and kept when the window keeps it. */
function addConversation(reading: ClaudeCodeReading, line: ConversationLine, lineNumber: number): void {
  const where = `line ${lineNumber}`;
  const messageId = line.type === 'assistant' ? line.message.id : undefined;
  if (messageId !== undefined && reading.byMessageId.has(messageId)) {
    const builder = reading.byMessageId.get(messageId);
    if (builder !== undefined) joinToMessage(reading, builder, line, where);
    return;
  }
  const index = reading.messageCount;
  reading.messageCount += 1;
  if (!reading.window.keeps(index)) {
    if (messageId !== undefined) reading.byMessageId.set(messageId, undefined);
    return;
  }
  const content = line.message.content;
  const isEcho = line.type === 'user' && isLocalCommandEcho(content);
  const builder: MessageBuilder = {
    index,
    role: line.type,
    ts: line.timestamp,
    parts: blocksToParts(content, where, reading.warnings, reading.caps),
    sidechain: line.isSidechain === true,
    compactSummary: line.isCompactSummary === true,
    meta: line.isMeta === true || line.message.model === SYNTHETIC_MODEL || isEcho,
  };
  reading.kept.push(builder);
  reading.window.kept(index, builder.parts);
  if (messageId !== undefined) reading.byMessageId.set(messageId, builder);
  const agent = line.type === 'user' && !builder.sidechain ? linkedAgent(line) : undefined;
  if (agent !== undefined) reading.links.push({ messageIndex: index, ...agent });
}

/** The session's id, Claude Code's version and the working directory, from the first line that has each. */
function readSessionFields(
  reading: ClaudeCodeReading,
  record: Record<string, unknown>,
  lineNumber: number,
): void {
  if (!reading.hasSeenSessionId && typeof record.sessionId === 'string') {
    reading.hasSeenSessionId = true;
    if (SessionId.safeParse(record.sessionId).success) reading.sessionId = record.sessionId;
    else
      reading.warnings.push(
        `line ${lineNumber}: sessionId is not a usable id; the file name is used instead`,
      );
  }
  if (reading.version === undefined && typeof record.version === 'string') reading.version = record.version;
  if (reading.cwd === undefined && typeof record.cwd === 'string' && record.cwd.startsWith('/'))
    reading.cwd = record.cwd;
}

/** A line of another type than user or assistant: skipped, with one warning per type not known. */
function skipOtherType(reading: ClaudeCodeReading, type: unknown, lineNumber: number): void {
  const name = typeof type === 'string' ? type : '(none)';
  if (!SILENT_TYPES.has(name)) warnUnknownType(reading, name, lineNumber);
}

/**
 * Shows the keep-out screen every line, kept or not (a session is kept out whole); the raw blocks, since a
 * server tool's block is of a type the schema does not know. Only the person's own lines may hold the marker.
 */
function observeLine(
  reading: ClaudeCodeReading,
  line: ConversationLine,
  record: Record<string, unknown>,
): void {
  const typedByUser =
    line.type === 'user' &&
    line.isMeta !== true &&
    line.isSidechain !== true &&
    line.isCompactSummary !== true &&
    !isLocalCommandEcho(line.message.content);
  observeRawMessage(
    reading.keepOut,
    Math.max(0, reading.messageCount - 1),
    { role: line.type, content: (record.message as { content?: unknown }).content },
    typedByUser,
  );
}

/** One line of the transcript: a conversation line becomes (part of) a message, others are skipped. */
function addLine(reading: ClaudeCodeReading, text: string, lineNumber: number): void {
  const { caps, warnings } = reading;
  const record = lineRecord(reading, text, lineNumber);
  if (record === undefined) return;
  readSessionFields(reading, record, lineNumber);
  const type = record.type;
  if (type !== 'user' && type !== 'assistant') {
    skipOtherType(reading, type, lineNumber);
    return;
  }
  const dropped = dropBlocksOverLimit(record.message, caps.blocksPerMessage);
  if (dropped > 0) warnings.push(blocksDroppedWarning(`line ${lineNumber}`, dropped, caps.blocksPerMessage));
  const parsed = ConversationLine.safeParse(record);
  if (!parsed.success) {
    warnings.push(
      `line ${lineNumber}: ${type} line of unexpected shape (${describeZodError(parsed.error)}), skipped`,
    );
    return;
  }
  if (
    reading.firstTimestamp === undefined &&
    parsed.data.timestamp !== undefined &&
    !Number.isNaN(Date.parse(parsed.data.timestamp))
  ) {
    reading.firstTimestamp = parsed.data.timestamp;
  }
  addConversation(reading, parsed.data, lineNumber);
  observeLine(reading, parsed.data, record);
}

/** The session read, or the error of a file with no line read. */
function finish(reading: ClaudeCodeReading, mtime: Date): Session {
  const { context, messageCount } = reading;
  if (reading.parsedLines === 0) throw noLineRead(context.file, reading.firstBadLine);
  const messages: SessionMessage[] = reading.kept.map((builder) => ({
    index: builder.index,
    role: builder.role,
    ts: builder.ts,
    parts: builder.parts,
    ...(builder.sidechain ? { sidechain: true } : {}),
    ...(builder.compactSummary ? { compactSummary: true } : {}),
    ...(builder.meta ? { meta: true } : {}),
  }));
  return {
    ...sessionHead(reading, mtime, 'claude-code', 'claude-code'),
    messages,
    messageCount,
    ...keptUntilOf(reading.window, messageCount),
    warnings: reading.warnings,
    ...keepOutOf(reading.keepOut.signals()),
  };
}

/** Starts reading one Claude Code transcript. */
export function createClaudeCodeAccumulator(context: ClaudeCodeContext): ClaudeCodeAccumulator {
  const reading: ClaudeCodeReading = {
    ...startLineReading(context),
    kept: [],
    byMessageId: new Map<string, MessageBuilder | undefined>(),
    links: [],
    hasSeenSessionId: false,
  };
  return {
    addLine: (text, lineNumber) => addLine(reading, text, lineNumber),
    finish: (mtime) => finish(reading, mtime),
    subagentLinks: () => reading.links,
    attachSubagent: (link, part) => {
      reading.kept.find((builder) => builder.index === link.messageIndex)?.parts.push(part);
    },
    warn: (warning) => reading.warnings.push(warning),
  };
}
