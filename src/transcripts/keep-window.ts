import type { MessagePart } from './types.js';

/**
 * Which messages a reader keeps: those from `fromMessage` on, until the characters kept reach `keepChars`;
 * every later message is counted and not kept, and the first of them is `keptUntil`. A run reads no more of a
 * long transcript than its calls can carry: the rest is read by the next run, from `keptUntil` on, so memory
 * follows the run's budget rather than the file's size. At least one message is kept whatever its size.
 */
export interface KeepWindow {
  /** Whether the message at `index` (counted in file order) is kept. */
  keeps(index: number): boolean;
  /** Records the parts of a kept message (its characters count against the window). */
  kept(index: number, parts: readonly MessagePart[]): void;
  /** The first message not kept because the window was full, when `messageCount` is past it. */
  keptUntil(messageCount: number): number | undefined;
}

export function createKeepWindow(fromMessage: number, keepChars = Number.POSITIVE_INFINITY): KeepWindow {
  let chars = 0;
  let full: number | undefined;
  return {
    keeps: (index) => index >= fromMessage && (full === undefined || index < full),
    kept(index, parts) {
      if (full !== undefined) return;
      chars += partsChars(parts);
      if (chars >= keepChars) full = index + 1;
    },
    keptUntil: (messageCount) => (full !== undefined && full < messageCount ? full : undefined),
  };
}

/**
 * Characters of a message's parts as kept (texts, tool results, tool-call inputs' strings, a sub-agent's
 * brief and answer): what a window measures. Cheap: no serialisation.
 */
export function partsChars(parts: readonly MessagePart[]): number {
  let chars = 0;
  for (const part of parts) {
    if (part.kind === 'tool-call') chars += part.name.length + valueChars(part.input);
    else if (part.kind === 'subagent') chars += part.prompt.length + part.answer.length;
    else chars += part.text.length;
  }
  return chars;
}

/** Characters of the strings in a (capped) tool-call input, and a few for every other value. */
function valueChars(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null || depth > 8) return 4;
  let chars = 2;
  for (const item of Array.isArray(value) ? value : Object.values(value))
    chars += 1 + valueChars(item, depth + 1);
  return chars;
}

/** `{ keptUntil }` for a Session whose window filled before its last message, else nothing. */
export function keptUntilOf(window: KeepWindow, messageCount: number): { keptUntil?: number } {
  const keptUntil = window.keptUntil(messageCount);
  return keptUntil === undefined ? {} : { keptUntil };
}
