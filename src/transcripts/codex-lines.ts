import type { MessagePart, MessageRole, Session, SessionMessage } from './types.js';
import { SessionId } from './message-schema.js';
import { capHead, capHeadAndTail, capInputStrings, type PartCaps } from './normalize-message.js';
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
import { keepOutOf } from './keep-out-signals.js';

/**
 * Pure part of the OpenAI Codex CLI rollout reader: lines go in one at a time, a Session comes out.
 *
 * A rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`) is Codex's `RolloutLine` per line:
 * `{timestamp, type, payload}` where `type` is `session_meta`, `response_item`, `compacted`, `turn_context` or
 * `event_msg` (`RolloutItem` in codex-rs/protocol, serde `tag = "type", content = "payload"`). What the model
 * saw is in the `response_item` lines (`ResponseItem`, tagged by `payload.type`):
 *
 * - `message` of role `user` or `assistant` becomes a message (`input_text` / `output_text` parts), except the
 *   context Codex injects as user messages (`<user_instructions>`, `<environment_context>`, the
 *   `# AGENTS.md instructions` preamble, …), which is dropped and counted; `developer` and `system`
 *   messages are Codex's own instructions: dropped and counted.
 * - `function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call` become an assistant message
 *   with one tool call (the digest shows each as one line); `function_call_output` and
 *   `custom_tool_call_output` a tool message with its result.
 * - `reasoning` (encrypted, with at most a summary) is dropped and counted, as is any item type not listed.
 *
 * `compacted` (the summary Codex wrote when it compacted the history) becomes a compact-summary message.
 * `event_msg` lines repeat the response items for the UI and `turn_context` holds settings: both skipped and
 * counted. A rollout has no end marker: the scanner treats a recent file as live (see transcript-readers.ts).
 * Every message keeps its position in the file, so a rollout that grew is read from the ledger's count on.
 */

/** Text a user message starts with when Codex injected it, not the person (codex-rs `is_contextual_user`). */
const INJECTED_USER_PREFIXES: readonly string[] = [
  '<user_instructions>',
  '<environment_context>',
  '# AGENTS.md instructions',
  '<INSTRUCTIONS>',
  '<user_shell_command>',
  '<turn_aborted>',
];

/** True when a user message's text is context Codex injected (instructions, environment, AGENTS.md). */
export function isInjectedUserText(text: string): boolean {
  const trimmed = text.trimStart();
  return INJECTED_USER_PREFIXES.some((prefix) => trimmed.startsWith(prefix));
}

/** Why lines or items were not turned into messages, each with how many there were. */
export type CodexDropped = Readonly<Record<string, number>>;

/** What the accumulator needs from the IO edge (`line-reading.ts`). */
export type CodexContext = LineReaderContext;

export interface CodexAccumulator {
  /** One line of the file, without its newline; `lineNumber` is 1-based. */
  addLine(line: string, lineNumber: number): void;
  /** The session; `mtime` is `startedAt` when no line has a timestamp. */
  finish(mtime: Date): Session;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(object: JsonObject, key: string): string | undefined {
  const value = object[key];
  return typeof value === 'string' ? value : undefined;
}

/** The texts of a message's `content` (`input_text`, `output_text`, `text`); images become "[image]". */
function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    const text = stringField(block, 'text');
    if (text !== undefined) texts.push(text);
    else if (block.type === 'input_image') texts.push('[image]');
  }
  return texts;
}

/** A tool call's arguments: Codex writes them as a JSON string; parsed when it is JSON, else kept as text. */
function parsedArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return { arguments: value };
  }
}

/**
 * A tool output's text. Codex writes it as a string, often JSON of `{output, metadata}` (shell), or as
 * `{content, success}` / a list of content items in newer versions.
 */
function outputText(value: unknown): { text: string; isError: boolean } {
  let output = value;
  if (typeof output === 'string') {
    const trimmed = output.trimStart();
    if (trimmed.startsWith('{')) {
      try {
        const parsed = JSON.parse(output) as unknown;
        if (isObject(parsed) && typeof parsed.output === 'string') {
          const metadata = parsed.metadata;
          const exitCode = isObject(metadata) ? metadata.exit_code : undefined;
          return { text: parsed.output, isError: typeof exitCode === 'number' && exitCode !== 0 };
        }
      } catch {
        // Not JSON: the string is the output.
      }
    }
    return { text: output, isError: false };
  }
  if (isObject(output)) {
    const success = output.success;
    output = output.content ?? output.output;
    const texts = contentTexts(output);
    return { text: texts.join('\n'), isError: success === false };
  }
  return { text: contentTexts(output).join('\n'), isError: false };
}

/** What the reading of one rollout has gathered so far; the functions below add to it line by line. */
interface CodexReading extends LineReading {
  readonly dropped: Record<string, number>;
  readonly kept: SessionMessage[];
}

/** Counts one line or item not turned into a message, under why. */
function drop(reading: CodexReading, why: string): void {
  reading.dropped[why] = (reading.dropped[why] ?? 0) + 1;
}

/** Numbers the next message, and keeps it when the keep window does. */
function push(
  reading: CodexReading,
  role: MessageRole,
  ts: string | undefined,
  parts: MessagePart[],
  flags: { compactSummary?: boolean } = {},
): void {
  const index = reading.messageCount;
  reading.messageCount += 1;
  if (!reading.window.keeps(index)) return;
  reading.kept.push({
    index,
    role,
    ts,
    parts,
    ...(flags.compactSummary === true ? { compactSummary: true } : {}),
  });
  reading.window.kept(index, parts);
}

/** A tool-call part, its input's strings capped. */
function toolCall(caps: PartCaps, id: unknown, name: string, input: unknown): MessagePart {
  return {
    kind: 'tool-call',
    id: typeof id === 'string' ? id : undefined,
    name,
    input: capInputStrings(input, caps.toolInputChars),
  };
}

/** A `message` item: a user's or the assistant's texts; injected context and other roles are dropped. */
function addMessage(reading: CodexReading, payload: JsonObject, ts: string | undefined): void {
  const role = payload.role;
  if (role !== 'user' && role !== 'assistant') {
    drop(reading, `${typeof role === 'string' ? role : 'unknown-role'} message`);
    return;
  }
  const texts = contentTexts(payload.content);
  if (role === 'user' && texts.some(isInjectedUserText)) {
    drop(reading, 'injected context');
    return;
  }
  const parts: MessagePart[] = texts
    .filter((text) => text.trim() !== '')
    .map((text) => ({ kind: 'text', text: capHeadAndTail(text, reading.caps.textChars) }));
  if (parts.length === 0) {
    drop(reading, 'empty message');
    return;
  }
  // Injected context was dropped above: what is left of a user message the person typed.
  if (role === 'user') for (const text of texts) reading.keepOut.userText(reading.messageCount, text);
  push(reading, role, ts, parts);
}

/** A tool call's name as the keep-out screen sees it: an MCP tool's namespace (`mcp__server`) first. */
function observeToolCall(reading: CodexReading, payload: JsonObject): void {
  const namespace = stringField(payload, 'namespace');
  const name = stringField(payload, 'name') ?? '';
  reading.keepOut.toolUse(
    reading.messageCount,
    namespace?.startsWith('mcp__') === true ? `${namespace}__${name}` : name,
  );
}

/** A tool output item as a tool message with its result, capped. */
function addToolOutput(reading: CodexReading, payload: JsonObject, ts: string | undefined): void {
  const { text, isError } = outputText(payload.output);
  const callId = payload.call_id;
  push(reading, 'tool', ts, [
    {
      kind: 'tool-result',
      toolCallId: typeof callId === 'string' ? callId : undefined,
      text: capHead(text, reading.caps.toolResultChars),
      isError,
    },
  ]);
}

/** A `response_item` line: a message, a tool call or its output; reasoning and unknown items are dropped. */
function addResponseItem(reading: CodexReading, payload: JsonObject, ts: string | undefined): void {
  const caps = reading.caps;
  if (payload.type === 'function_call' || payload.type === 'custom_tool_call')
    observeToolCall(reading, payload);
  if (payload.type === 'web_search_call') reading.keepOut.toolUse(reading.messageCount, 'web_search', true);
  switch (payload.type) {
    case 'message':
      addMessage(reading, payload, ts);
      return;
    case 'function_call':
      push(reading, 'assistant', ts, [
        toolCall(
          caps,
          payload.call_id,
          stringField(payload, 'name') ?? 'function',
          parsedArguments(payload.arguments),
        ),
      ]);
      return;
    case 'custom_tool_call':
      push(reading, 'assistant', ts, [
        toolCall(caps, payload.call_id, stringField(payload, 'name') ?? 'tool', { input: payload.input }),
      ]);
      return;
    case 'local_shell_call': {
      const action = isObject(payload.action) ? payload.action : {};
      push(reading, 'assistant', ts, [
        toolCall(caps, payload.call_id, 'local_shell', { command: action.command }),
      ]);
      return;
    }
    case 'web_search_call':
      push(reading, 'assistant', ts, [toolCall(caps, payload.id, 'web_search', payload.action ?? {})]);
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      addToolOutput(reading, payload, ts);
      return;
    case 'reasoning':
      drop(reading, 'reasoning');
      return;
    default:
      drop(reading, `${typeof payload.type === 'string' ? payload.type : 'untyped'} item`);
  }
}

/** A `session_meta` line: the session id (when usable), the CLI's version and the working directory. */
function addSessionMeta(reading: CodexReading, payload: JsonObject, lineNumber: number): void {
  const id = payload.id;
  if (reading.sessionId === undefined && typeof id === 'string') {
    if (SessionId.safeParse(id).success) reading.sessionId = id;
    else
      reading.warnings.push(
        `line ${lineNumber}: session id is not a usable id; the file name is used instead`,
      );
  }
  reading.version ??= stringField(payload, 'cli_version');
  const where = stringField(payload, 'cwd');
  if (reading.cwd === undefined && where !== undefined && where.startsWith('/')) reading.cwd = where;
  drop(reading, 'session_meta');
}

/** A `compacted` line: Codex's summary of the history, as a compact-summary message. */
function addCompacted(reading: CodexReading, payload: JsonObject, ts: string | undefined): void {
  const summary = stringField(payload, 'message');
  if (summary === undefined || summary.trim() === '') {
    drop(reading, 'empty compacted');
    return;
  }
  push(reading, 'user', ts, [{ kind: 'text', text: capHeadAndTail(summary, reading.caps.textChars) }], {
    compactSummary: true,
  });
}

/** One line of the rollout, by its `type`. */
function addLine(reading: CodexReading, text: string, lineNumber: number): void {
  const value = lineRecord(reading, text, lineNumber);
  if (value === undefined) return;
  const timestamp = stringField(value, 'timestamp');
  const ts = timestamp !== undefined && !Number.isNaN(Date.parse(timestamp)) ? timestamp : undefined;
  if (reading.firstTimestamp === undefined && ts !== undefined) reading.firstTimestamp = ts;
  const payload = value.payload;
  const type = value.type;
  if (!isObject(payload)) {
    reading.warnings.push(`line ${lineNumber}: no payload object, skipped`);
    return;
  }
  switch (type) {
    case 'session_meta':
      addSessionMeta(reading, payload, lineNumber);
      return;
    case 'response_item':
      addResponseItem(reading, payload, ts);
      return;
    case 'compacted':
      addCompacted(reading, payload, ts);
      return;
    case 'turn_context':
    case 'event_msg':
      drop(reading, type);
      return;
    default: {
      const name = typeof type === 'string' ? type : '(none)';
      drop(reading, `${name} line`);
      warnUnknownType(reading, name, lineNumber);
    }
  }
}

/** The session read, or the error of a file with no line read. */
function finish(reading: CodexReading, mtime: Date): Session {
  const { context, messageCount } = reading;
  if (reading.parsedLines === 0) throw noLineRead(context.file, reading.firstBadLine);
  return {
    ...sessionHead(reading, mtime, 'codex', 'codex'),
    messages: reading.kept,
    messageCount,
    ...keptUntilOf(reading.window, messageCount),
    warnings: reading.warnings,
    dropped: { ...reading.dropped },
    ...keepOutOf(reading.keepOut.signals()),
  };
}

/** Starts reading one Codex rollout. */
export function createCodexAccumulator(context: CodexContext): CodexAccumulator {
  const reading: CodexReading = { ...startLineReading(context), dropped: {}, kept: [] };
  return {
    addLine: (text, lineNumber) => addLine(reading, text, lineNumber),
    finish: (mtime) => finish(reading, mtime),
  };
}
