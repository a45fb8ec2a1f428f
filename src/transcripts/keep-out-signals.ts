/**
 * What in a transcript keeps its session out of memory, seen by each reader over every message of the file
 * (those before `fromMessage` and past the keep window included), so a session is judged whole:
 *
 * - **the marker**: a message the person typed whose whole text is a line `#dreamd:ignore` (a line of its own;
 *   case and surrounding spaces aside). Only the person's own messages count: never the assistant's text, a
 *   tool's result, a sub-agent's brief, a compaction summary, hook output or context an agent injected, so
 *   no file or web page the agent reads can keep a session out (or let one in).
 * - **external context**: a tool that brings web or MCP content into the session: Anthropic's server tools
 *   (`server_tool_use`, e.g. `web_search`, `web_fetch`), Claude Code's `WebFetch` and `WebSearch`, any tool
 *   whose name starts `mcp__` (Claude Code's and Codex's MCP tools), Codex's `web_search_call`. Whether this
 *   keeps a session out is the config's `keepOut.externalContext`; the reader only reports it.
 *
 * Pure: the readers call it; the decision is the consolidation's (`gather.ts`).
 */

/** The marker, as documented: a line of a user message that is exactly this (case-insensitive, trimmed). */
export const KEEP_OUT_MARKER = '#dreamd:ignore';

/** What a reader saw; each is the first time it was seen (message index in the file, 0-based). */
export interface KeepOutSignals {
  readonly marker?: { readonly index: number } | undefined;
  readonly externalContext?: { readonly index: number; readonly tool: string } | undefined;
}

/** True when a text the person typed holds the marker as a line of its own. */
export function holdsMarker(text: string): boolean {
  if (!text.toLowerCase().includes(KEEP_OUT_MARKER)) return false;
  return text.split(/\r?\n/).some((line) => line.trim().toLowerCase() === KEEP_OUT_MARKER);
}

/** Claude Code's tools that read the web. */
const WEB_TOOLS: ReadonlySet<string> = new Set(['WebFetch', 'WebSearch', 'web_search', 'web_fetch']);

/** True when a tool of this name brings web or MCP content into the session. */
export function isExternalTool(name: string): boolean {
  return WEB_TOOLS.has(name) || name.startsWith('mcp__');
}

/** Collects the signals of one transcript, message by message. */
export interface KeepOutCollector {
  /** A text the person typed, in message `index`. */
  userText(index: number, text: string): void;
  /** A tool the agent used, in message `index` (`server` for a provider's server tool: always external). */
  toolUse(index: number, name: string, server?: boolean): void;
  /** What was seen; undefined when nothing was. */
  signals(): KeepOutSignals | undefined;
}

export function createKeepOutCollector(): KeepOutCollector {
  let marker: KeepOutSignals['marker'];
  let externalContext: KeepOutSignals['externalContext'];
  return {
    userText(index, text) {
      if (marker === undefined && holdsMarker(text)) marker = { index };
    },
    toolUse(index, name, server = false) {
      if (externalContext === undefined && (server || isExternalTool(name)))
        externalContext = { index, tool: name };
    },
    signals: () =>
      marker === undefined && externalContext === undefined ? undefined : { marker, externalContext },
  };
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Looks at one raw Anthropic- or OpenAI-shaped message (a native file's message, Claude Code's `message`)
 * before any validation, so a message outside what the reader keeps is seen too. `typedByUser` says whether
 * a user message is the person's own words (not Claude Code's meta lines, sub-agent briefs or summaries).
 * Text inside a `tool_result` block is never the person's: only a string content or `text` blocks count.
 */
export function observeRawMessage(
  collector: KeepOutCollector,
  index: number,
  raw: unknown,
  typedByUser: boolean,
): void {
  if (!isObject(raw)) return;
  const { role, content } = raw;
  if (role === 'user' && typedByUser) {
    if (typeof content === 'string') collector.userText(index, content);
    else if (Array.isArray(content))
      for (const block of content)
        if (isObject(block) && block.type === 'text' && typeof block.text === 'string')
          collector.userText(index, block.text);
  }
  if (role !== 'assistant') return;
  if (Array.isArray(content)) {
    for (const block of content) {
      if (!isObject(block) || typeof block.name !== 'string') continue;
      if (block.type === 'tool_use') collector.toolUse(index, block.name);
      else if (block.type === 'server_tool_use') collector.toolUse(index, block.name, true);
    }
  }
  if (Array.isArray(raw.tool_calls))
    for (const call of raw.tool_calls)
      if (isObject(call) && isObject(call.function) && typeof call.function.name === 'string')
        collector.toolUse(index, call.function.name);
}

/** `{ keepOut }` for a Session when something was seen, else nothing. */
export function keepOutOf(signals: KeepOutSignals | undefined): { keepOut?: KeepOutSignals } {
  return signals === undefined ? {} : { keepOut: signals };
}
