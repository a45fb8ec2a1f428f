/**
 * Tool calls and results as the digest shows them: a call is one short line naming the tool and its most
 * telling input, a result is cut short with a marker of how much was cut. The model learns from what the
 * user says; tool traffic only gives it context, so it gets a few hundred characters, not the payload.
 */
import { cleanText, collapseWhitespace } from './clean-text.js';
import { redactSecrets } from './redact-secrets.js';

/** Longest summary of a tool call's input, in characters. */
export const TOOL_INPUT_SUMMARY_CHARS = 120;

/**
 * Input fields that say most about a call, best first: the shell command, the file, the URL, the search.
 * `description` comes before `prompt` so a sub-agent call shows its short title, not its whole brief.
 */
const TELLING_FIELDS = [
  'command',
  'cmd',
  'file_path',
  'filePath',
  'notebook_path',
  'url',
  'query',
  'pattern',
  'q',
  'path',
  'description',
  'skill',
  'prompt',
  'name',
  'title',
  'subject',
  'text',
] as const;

/**
 * Characters of a tool result looked at before cutting. Cleaning and redaction run on this window only, so
 * a 5 MB result costs no more than a short one; 3× the kept length (at least 512) leaves room for collapsed
 * indentation and removed reminders, and a secret that straddles the cut is still redacted whole.
 */
const RESULT_WINDOW_MIN_CHARS = 512;
const RESULT_WINDOW_FACTOR = 3;

export interface RenderedLine {
  readonly text: string;
  readonly redactions: number;
}

/** Cut `text` to `limit` characters, with a marker saying how many were cut. */
export function cutText(text: string, limit: number, alreadyCut = 0): string {
  const over = Math.max(0, text.length - limit) + alreadyCut;
  if (over === 0) return text;
  const kept = text.slice(0, Math.max(0, limit)).trimEnd();
  return `${kept}${kept === '' ? '' : '…'} [cut ${over} chars]`;
}

function firstStringField(input: Record<string, unknown>): string | undefined {
  for (const field of TELLING_FIELDS) {
    const value = input[field];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  for (const value of Object.values(input)) {
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** The most telling part of a tool call's input, as one short line. */
export function summarizeToolInput(input: unknown): string {
  let summary: string | undefined;
  if (typeof input === 'string') summary = input;
  else if (typeof input === 'number' || typeof input === 'boolean') summary = String(input);
  else if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    summary = firstStringField(input as Record<string, unknown>);
  }
  if (summary === undefined) return '';
  // Only a bounded prefix is looked at: a Write's `content` can be megabytes.
  const window = summary.slice(0, TOOL_INPUT_SUMMARY_CHARS * RESULT_WINDOW_FACTOR);
  return collapseWhitespace(window);
}

/** `assistant → Bash(ls -la src)`: one line, input redacted then cut to 120 characters. */
export function renderToolCall(name: string, input: unknown): RenderedLine {
  const redacted = redactSecrets(summarizeToolInput(input));
  const summary = redacted.text;
  const shown =
    summary.length > TOOL_INPUT_SUMMARY_CHARS
      ? `${summary.slice(0, TOOL_INPUT_SUMMARY_CHARS - 1).trimEnd()}…`
      : summary;
  return { text: `assistant → ${collapseWhitespace(name) || 'tool'}(${shown})`, redactions: redacted.count };
}

/**
 * Claude Code's file-writing tools. Their result, when it is not an error, only says the write happened and
 * echoes the lines just written ("The file … has been updated. Here's the result of running `cat -n` …"): task
 * state, and the call's own line already names the file. Their errors are kept.
 */
const FILE_WRITE_TOOLS: ReadonlySet<string> = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

/**
 * `tool ← Bash: total 48 drwxr-xr-x … [cut 5120 chars]`, or `tool ← Bash ERROR: …` for a failed call.
 * Returns undefined when the result is empty and not an error (nothing to tell), and for a file-writing
 * tool's result that is not an error (see `FILE_WRITE_TOOLS`).
 */
export function renderToolResult(
  toolName: string | undefined,
  text: string,
  isError: boolean,
  resultChars: number,
): RenderedLine | undefined {
  if (!isError && toolName !== undefined && FILE_WRITE_TOOLS.has(toolName)) return undefined;
  const windowChars = Math.max(RESULT_WINDOW_MIN_CHARS, resultChars * RESULT_WINDOW_FACTOR);
  const window = text.slice(0, windowChars);
  const redacted = redactSecrets(cleanText(window));
  if (redacted.text === '' && !isError && text.length <= windowChars) return undefined;
  const body = cutText(redacted.text, resultChars, text.length - window.length);
  const label = `tool ← ${toolName ?? 'result'}${isError ? ' ERROR' : ''}`;
  return { text: body === '' ? label : `${label}: ${body}`, redactions: redacted.count };
}
