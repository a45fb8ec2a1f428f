/**
 * The digest of one session: the compact, dated, redacted text the extraction model reads (ARCHITECTURE.md,
 * Consolidation step 3). Pure: no IO, no clock; every date comes from the session itself.
 *
 * ```
 * ### session 7f3a · 2026-11-20
 * [2026-11-20 14:03] user: our staging box moved to 10.0.4.17 last Thursday [2026-11-12]
 * [2026-11-20 14:03] assistant: I'll update the deploy script.
 * assistant → Edit(deploy/staging.sh)
 * assistant → Bash(./deploy/staging.sh --dry-run)
 * tool ← Bash: deploying to 10.0.4.17 … [cut 1840 chars]
 * ```
 *
 * What is kept and what is dropped, and why:
 * - User text is never cut: facts come from what the user says, and every planted fact must reach the model.
 * - Assistant text is cut at 1,200 characters: it restates the work; its first paragraph says what was done.
 * - A tool call is one line (name and the most telling input, ≤ 120 chars); a result keeps 200 characters. A
 *   file-writing tool's result (Edit, Write …) is dropped unless it is an error: it echoes what was written.
 * - Dropped: system messages, thinking, meta lines (hook output, local-command echoes), injected
 *   `<system-reminder>` and command blocks, hook boilerplate, images, and text already seen verbatim earlier
 *   in the session (40 characters or more; short replies such as "yes" are kept, they carry the flow).
 * - Sidechain (sub-agent) messages are dropped whole: their prompt is written by the main agent (already
 *   shown as its Task call) and their answer comes back to the main thread as that call's result, so the
 *   user's own words are never only there; keeping them would double the cost of agent-heavy sessions.
 * - A sub-agent's own file (Claude Code ≥ 2.0, read with its parent) gives a `subagent` part on the message of
 *   its result: its brief and final answer, as `sub-agent → …` and `sub-agent ← …` lines cut like assistant
 *   text, in place of that result's (shorter) tool line.
 * - A compaction summary is kept whole, marked `summary of earlier conversation`: it carries the facts of the
 *   messages it replaced.
 * - Courtesy and filler (see `filler.ts`), before any cutting: a user or assistant text that is only a greeting,
 *   thanks or goodbye; the assistant's stock openers and closers ("Great question!", "Let me know if you have
 *   any other questions."); and assistant sentences that only echo the user's previous message. "ok", "yes" and
 *   "perfect" stay: after a proposal they are confirmations.
 * - Every text is resolved for relative dates against its own message's date, then redacted.
 */
import type { Session, SessionMessage, SubagentPart } from '../transcripts/types.js';
import { cleanText, collapseWhitespace, compactSummaryCore, isCompactSummaryText } from './clean-text.js';
import { CHARS_PER_TOKEN } from './estimate-tokens.js';
import { dropAssistantFiller, isSmallTalkOnly, saidWords, type SaidWords } from './filler.js';
import { jsonLength } from './json-length.js';
import { redactSecrets } from './redact-secrets.js';
import { resolveRelativeDates } from './relative-dates.js';
import { renderToolCall, renderToolResult } from './tool-lines.js';
import type { DigestLine, DigestOptions, SessionDigest } from './types.js';

/** Characters kept of one tool result (`limits.toolResultChars`). */
export const DEFAULT_TOOL_RESULT_CHARS = 200;
/**
 * Characters kept of one assistant text: 280, as its head and tail. Facts come from what the user says or
 * confirms; the assistant's turn is context, and its gist (the answer, and the question it ends on, such as
 * "shall I save this address?") sits at its start and its end. In plain dialogue the assistant writes most of
 * the characters, so this figure sets most of a call's size.
 */
export const DEFAULT_ASSISTANT_TEXT_CHARS = 280;
/**
 * Characters kept of one user text: 16,000 (about 4,000 tokens). What users say is where facts come from, so
 * this is far above any typed message; it only bites on a pasted log or document, whose head and tail are kept
 * (a 5 MB paste would otherwise take hundreds of calls and never fit a run's call budget).
 */
export const DEFAULT_USER_TEXT_CHARS = 16_000;

/**
 * Characters an assistant text keeps of its end: a fifth of the limit, and at least 100 (half the limit at
 * most), so the question a short-cut answer ends on ("Shall I save Rua das Flores 28 as your default
 * address?") is kept whole.
 */
export function assistantTailChars(limit: number): number {
  return Math.max(Math.floor(limit / 5), Math.min(100, Math.floor(limit / 2)));
}

/**
 * Keeps the first `limit − tailChars` and the last `tailChars` characters (default a fifth of `limit`), with a
 * marker of what was left out.
 */
export function cutMiddle(
  text: string,
  limit: number,
  alreadyLeftOut = 0,
  tailChars = Math.floor(limit / 5),
): string {
  if (text.length <= limit && alreadyLeftOut === 0) return text;
  const tail = Math.min(tailChars, Math.floor(text.length / 5));
  const head = Math.min(limit, text.length) - tail;
  const leftOut = text.length - head - tail + alreadyLeftOut;
  return `${text.slice(0, head).trimEnd()} … [${leftOut} chars left out] … ${text.slice(text.length - tail).trimStart()}`;
}

function tailFor(role: SessionMessage['role'], limit: number): number {
  return role === 'assistant' ? assistantTailChars(limit) : Math.floor(limit / 5);
}

/** Characters dropped at the inner edge of each window: more than any secret the redactor knows ends within. */
const WINDOW_EDGE_CHARS = 128;

/**
 * A raw text much longer than what the digest keeps of it is first narrowed to a head and a tail window
 * (2 × the limit + 256 in all, split like `cutMiddle`), so cleaning, date resolution and redaction run on
 * kilobytes instead of the whole text. Each window is cleaned on its own and loses {@link WINDOW_EDGE_CHARS}
 * at its cut edge, so a secret the cut split in two never reaches the output half-redacted.
 */
function windowedClean(
  text: string,
  limit: number,
  tailKept = Math.floor(limit / 5),
): { text: string; leftOut: number } {
  const window = 2 * limit + 256;
  if (text.length <= window) return { text: cleanText(text), leftOut: 0 };
  // The tail window holds the tail kept, what its cut edge loses, and some room.
  const tailChars = Math.max(Math.floor(window / 5), tailKept + WINDOW_EDGE_CHARS + 32);
  const head = cleanText(text.slice(0, window - tailChars));
  const tail = cleanText(text.slice(text.length - tailChars));
  const keptHead = head.slice(0, Math.max(0, head.length - WINDOW_EDGE_CHARS));
  const keptTail = tail.slice(Math.min(tail.length, WINDOW_EDGE_CHARS));
  return { text: `${keptHead} ${keptTail}`.trim(), leftOut: text.length - keptHead.length - keptTail.length };
}

/**
 * Characters each kept end of a text carries beyond what the cut keeps when it is dated and redacted alone
 * (see `datedAndCut`): room for a secret (never longer than {@link WINDOW_EDGE_CHARS}) or a date expression
 * that runs past the cut, and for the context a date's tense is read from.
 */
const KEPT_END_MARGIN_CHARS = WINDOW_EDGE_CHARS;

/**
 * The body of a line: `text` dated (against `date`), redacted, and cut to `limit` with `tailChars` of its end
 * (`cutMiddle`). A text longer than the cut keeps plus a margin at each kept end is dated and redacted only
 * in those two ends, each on its own: date resolution and redaction scan every character they are given, and
 * an assistant's text is cut to a third of what it is read. Whole when an end came out shorter than it keeps
 * (a long secret replaced by its short marker), so no middle character is shown as if it were the head's.
 */
function datedAndCut(
  text: string,
  date: string,
  limit: number,
  leftOut: number,
  tailChars: number,
): { text: string; redactions: number } {
  const headChars = limit - tailChars;
  const margin = KEPT_END_MARGIN_CHARS;
  if (text.length > limit + 2 * margin) {
    const head = redactSecrets(resolveRelativeDates(text.slice(0, headChars + margin), date));
    const tail = redactSecrets(resolveRelativeDates(text.slice(text.length - tailChars - margin), date));
    if (head.text.length >= headChars + margin / 2 && tail.text.length >= tailChars + margin / 2) {
      const middle = text.length - (headChars + margin) - (tailChars + margin);
      return {
        text: cutMiddle(head.text + tail.text, limit, leftOut + middle, tailChars),
        redactions: head.count + tail.count,
      };
    }
  }
  const whole = redactSecrets(resolveRelativeDates(text, date));
  return { text: cutMiddle(whole.text, limit, leftOut, tailChars), redactions: whole.count };
}

/** Texts shorter than this are never dropped as repeats ("yes", "go on", "thanks"). */
export const REPEAT_MIN_CHARS = 40;

const COMPACT_SUMMARY_LABEL = 'summary of earlier conversation';

/** A timestamp that starts with its date as written: YYYY-MM-DD. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;

interface Stamp {
  /** YYYY-MM-DD, the reference for relative dates. */
  readonly date: string;
}

/**
 * The date and minute of an ISO timestamp, as written: `2026-11-20T14:03:00+02:00` is 14:03 on the 20th,
 * the writer's local time, which is what "today" in that message meant. Other formats go through `Date`
 * and come out in UTC.
 */
function toStamp(timestamp: string | undefined): Stamp | undefined {
  if (timestamp === undefined) return undefined;
  if (ISO_DATE.test(timestamp)) return { date: timestamp.slice(0, 10) };
  const parsed = new Date(timestamp);
  if (Number.isNaN(parsed.getTime())) return undefined;
  return { date: parsed.toISOString().slice(0, 10) };
}

/** Whether a message contributes nothing to the digest, whatever its parts. */
function isSkipped(message: SessionMessage): boolean {
  return message.role === 'system' || message.meta === true || message.sidechain === true;
}

interface DigestState {
  /** YYYY-MM-DD of the session header. */
  readonly sessionDate: string;
  readonly seenTexts: Set<string>;
  readonly toolNames: Map<string, string>;
  readonly lines: DigestLine[];
  redactions: number;
  /** The last user text, for telling an assistant sentence that only echoes it, and its words once asked. */
  userText: string;
  userWords: SaidWords | undefined;
}

/** A user text longer than this (a pasted log or document) is not used to tell echoes: too many words. */
const ECHO_SOURCE_MAX_CHARS = 2_000;

/** Record what earlier (already consolidated) messages said, so their boilerplate is not sent again. */
function rememberEarlier(message: SessionMessage, state: DigestState, limit: number): void {
  if (isSkipped(message)) return;
  for (const part of message.parts) {
    if (part.kind === 'text') {
      // Windowed as `messageText` does, so a repeat is recognised by the same key.
      const summary =
        message.role === 'user' && (message.compactSummary === true || isCompactSummaryText(part.text));
      const raw = summary ? compactSummaryCore(part.text) : part.text;
      const cleaned = windowedClean(raw, limit, tailFor(message.role, limit)).text;
      if (cleaned.length >= REPEAT_MIN_CHARS) state.seenTexts.add(cleaned);
    } else if (part.kind === 'tool-call' && part.id !== undefined) {
      state.toolNames.set(part.id, part.name);
    }
  }
}

function userWordsOf(state: DigestState): SaidWords {
  state.userWords ??= saidWords(state.userText);
  return state.userWords;
}

/** The message's text parts, cleaned and without repeats, joined into one line's body. */
function messageText(
  message: SessionMessage,
  state: DigestState,
  limit: number,
): { text: string; compact: boolean; leftOut: number } {
  let text = '';
  let leftOut = 0;
  let compact = message.compactSummary === true;
  for (const part of message.parts) {
    if (part.kind !== 'text') continue;
    const summary =
      message.role === 'user' && (message.compactSummary === true || isCompactSummaryText(part.text));
    if (summary) compact = true;
    const raw = summary ? compactSummaryCore(part.text) : part.text;
    const window = windowedClean(raw, limit, tailFor(message.role, limit));
    leftOut += window.leftOut;
    if (window.text === '' || (message.compactSummary !== true && isSmallTalkOnly(window.text))) continue;
    const cleaned =
      message.role === 'assistant' ? dropAssistantFiller(window.text, () => userWordsOf(state)) : window.text;
    if (cleaned === '') continue;
    if (cleaned.length >= REPEAT_MIN_CHARS) {
      if (state.seenTexts.has(cleaned)) continue;
      state.seenTexts.add(cleaned);
    }
    if (message.role === 'user' && isCompactSummaryText(cleaned)) compact = true;
    text = text === '' ? cleaned : `${text} ${cleaned}`;
  }
  if (message.role === 'user' && text !== '') {
    state.userText = text.length <= ECHO_SOURCE_MAX_CHARS ? text : '';
    state.userWords = undefined;
  }
  return { text, compact, leftOut };
}

/** Adds one line of `message` to the digest. */
function pushLine(state: DigestState, message: SessionMessage, text: string, redactions: number): void {
  state.lines.push({ message: message.index, text });
  state.redactions += redactions;
}

/**
 * `sub-agent → <brief>` and `sub-agent ← <answer>`, each cleaned, dated, redacted and cut like an assistant
 * text: both were written by agents, so they are context for the model, never the user's words.
 */
function subagentLines(
  part: SubagentPart,
  stamp: Stamp,
  limit: number,
): { text: string; redactions: number }[] {
  const lines: { text: string; redactions: number }[] = [];
  for (const [arrow, raw] of [
    ['→', part.prompt],
    ['←', part.answer],
  ] as const) {
    const window = windowedClean(raw, limit, assistantTailChars(limit));
    if (window.text === '') continue;
    const body = datedAndCut(window.text, stamp.date, limit, window.leftOut, assistantTailChars(limit));
    lines.push({ text: `sub-agent ${arrow} ${body.text}`, redactions: body.redactions });
  }
  return lines;
}

function digestMessage(
  message: SessionMessage,
  stamp: Stamp,
  options: Required<Omit<DigestOptions, 'fromMessage'>>,
  state: DigestState,
): void {
  // A compaction summary is a user message: it gets the user's (larger) limit.
  const limit = message.role === 'assistant' ? options.assistantTextChars : options.userTextChars;
  const { text, compact, leftOut } = messageText(message, state, limit);
  if (text !== '') {
    const body = datedAndCut(text, stamp.date, limit, leftOut, tailFor(message.role, limit));
    const role = compact ? COMPACT_SUMMARY_LABEL : message.role;
    // The session header carries its date; a line says its own only when it was written on another day.
    const dated = stamp.date === state.sessionDate ? '' : `[${stamp.date}] `;
    pushLine(state, message, `${dated}${role}: ${body.text}`, body.redactions);
  }
  // A sub-agent's brief and answer, read from its own file, stand for its (shorter) result in this message.
  let answered: Set<string | undefined> | undefined;
  for (const part of message.parts)
    if (part.kind === 'subagent') (answered ??= new Set()).add(part.toolCallId);
  for (const part of message.parts) {
    if (part.kind === 'subagent') {
      for (const line of subagentLines(part, stamp, options.assistantTextChars)) {
        pushLine(state, message, line.text, line.redactions);
      }
    } else if (part.kind === 'tool-call') {
      if (part.id !== undefined) state.toolNames.set(part.id, part.name);
      const line = renderToolCall(part.name, part.input);
      pushLine(state, message, line.text, line.redactions);
    } else if (part.kind === 'tool-result' && answered?.has(part.toolCallId) !== true) {
      const name = part.toolCallId === undefined ? undefined : state.toolNames.get(part.toolCallId);
      const line = renderToolResult(name, part.text, part.isError, options.toolResultChars);
      if (line !== undefined) pushLine(state, message, line.text, line.redactions);
    }
  }
}

/**
 * Digest the messages of `session` whose index is at least `options.fromMessage` (default 0).
 * Messages before it, when the session holds them, only teach the digest what was already said.
 */
export function digestSession(session: Session, options: DigestOptions = {}): SessionDigest {
  const settings = {
    toolResultChars: options.toolResultChars ?? DEFAULT_TOOL_RESULT_CHARS,
    assistantTextChars: options.assistantTextChars ?? DEFAULT_ASSISTANT_TEXT_CHARS,
    userTextChars: options.userTextChars ?? DEFAULT_USER_TEXT_CHARS,
  };
  const fromMessage = options.fromMessage ?? 0;
  const sessionStamp = toStamp(session.startedAt) ?? { date: 'undated' };
  const state: DigestState = {
    sessionDate: sessionStamp.date,
    seenTexts: new Set(),
    toolNames: new Map(),
    lines: [],
    redactions: 0,
    userText: '',
    userWords: undefined,
  };

  let messagesRead = 0;
  let first: number | undefined;
  let last: number | undefined;
  let stamp = sessionStamp;
  for (const message of session.messages) {
    if (message.index < fromMessage) {
      rememberEarlier(
        message,
        state,
        message.role === 'assistant' ? settings.assistantTextChars : settings.userTextChars,
      );
      continue;
    }
    messagesRead += 1;
    first ??= message.index;
    last = message.index;
    stamp = toStamp(message.ts) ?? stamp;
    if (!isSkipped(message)) digestMessage(message, stamp, settings, state);
  }

  const header = `### session ${collapseWhitespace(session.id)} · ${sessionStamp.date}`;
  // The digest keeps its lines and nothing else of the session or of the digest's working state (the texts
  // seen, the tool names): a run holds a long session's digest through extraction, never its messages.
  const lines = state.lines;
  let chars = header.length;
  for (const line of lines) chars += 1 + line.text.length;
  // The joined text is built when first read: a session too long for one call is batched from `lines`, so a
  // big transcript never holds its digest twice.
  let text: string | undefined;
  return {
    sessionId: session.id,
    date: sessionStamp.date,
    get text(): string {
      text ??= [header, ...lines.map((line) => line.text)].join('\n');
      return text;
    },
    header,
    lines,
    chars,
    estimatedTokens: Math.ceil(chars / CHARS_PER_TOKEN),
    redactions: state.redactions,
    messagesRead,
    fromMessage: first,
    toMessage: last,
  };
}

/**
 * Characters of a session's messages from `fromMessage` on, serialized as JSON: the "raw transcript" that
 * digest ratios are taken against (reports and benchmarks; a run never needs it). A walk over every byte.
 */
export function digestedRawChars(session: Session, fromMessage = 0): number {
  const digested = session.messages.filter((message) => message.index >= fromMessage);
  return digested.length === 0 ? 0 : jsonLength(digested);
}
