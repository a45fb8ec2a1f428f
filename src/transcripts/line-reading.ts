/**
 * What the JSONL readers (Claude Code's `claude-code-lines.ts`, Codex's `codex-lines.ts`) share: the context
 * the IO edge gives them, the state of one file's reading, each line's first steps and the head of the session.
 */
import type { TranscriptFormat } from '../config/schema.js';
import type { Session } from './types.js';
import { DEFAULT_PART_CAPS, type PartCaps } from './normalize-message.js';
import { readJsonLine } from './parse-json-text.js';
import { createKeepWindow, type KeepWindow } from './keep-window.js';
import { createKeepOutCollector, type KeepOutCollector } from './keep-out-signals.js';

/** What a line reader needs from the IO edge. */
export interface LineReaderContext {
  /** Absolute path, for `Session.file` and error messages. */
  readonly file: string;
  /** File name without `.jsonl`: the session id when no line names a usable one. */
  readonly stem: string;
  /** First message index to keep (earlier ones are counted, not kept). */
  readonly fromMessage: number;
  /** Characters of messages kept before later ones are only counted (see `KeepWindow`). Default: all. */
  readonly keepChars?: number | undefined;
  /**
   * How much of each part is kept (see `PartCaps`), applied as each line is added, so a line's big strings
   * are garbage as soon as the line is done. Default `DEFAULT_PART_CAPS`.
   */
  readonly caps?: PartCaps | undefined;
}

/** What the reading of one JSONL file has gathered so far, whatever its format. */
export interface LineReading {
  readonly context: LineReaderContext;
  readonly caps: PartCaps;
  readonly warnings: string[];
  readonly window: KeepWindow;
  /** Line types not known, each warned about once. */
  readonly unknownTypes: Set<string>;
  // Seen over every message, kept or not: a session is kept out whole (keep-out-signals.ts).
  readonly keepOut: KeepOutCollector;
  messageCount: number;
  parsedLines: number;
  firstBadLine: string | undefined;
  sessionId: string | undefined;
  version: string | undefined;
  cwd: string | undefined;
  firstTimestamp: string | undefined;
}

/** The reading of a file before its first line: nothing kept, nothing counted. */
export function startLineReading(context: LineReaderContext): LineReading {
  return {
    context,
    caps: context.caps ?? DEFAULT_PART_CAPS,
    warnings: [],
    window: createKeepWindow(context.fromMessage, context.keepChars),
    unknownTypes: new Set<string>(),
    keepOut: createKeepOutCollector(),
    messageCount: 0,
    parsedLines: 0,
    firstBadLine: undefined,
    sessionId: undefined,
    version: undefined,
    cwd: undefined,
    firstTimestamp: undefined,
  };
}

/**
 * A line's JSON object, or undefined for a blank line or one skipped (its warning added). A line that is not
 * JSON is remembered as the first bad one when it is; any other counts as parsed.
 */
export function lineRecord(
  reading: LineReading,
  text: string,
  lineNumber: number,
): Record<string, unknown> | undefined {
  const line = readJsonLine(text, lineNumber);
  if (line.kind === 'blank') return undefined;
  if (line.kind === 'skip' && line.invalid) reading.firstBadLine ??= line.warning;
  else reading.parsedLines += 1;
  if (line.kind === 'skip') {
    reading.warnings.push(line.warning);
    return undefined;
  }
  return line.record;
}

/** Warns once per line type not known: its lines are skipped. */
export function warnUnknownType(reading: LineReading, name: string, lineNumber: number): void {
  if (reading.unknownTypes.has(name)) return;
  reading.unknownTypes.add(name);
  reading.warnings.push(`line ${lineNumber}: line type "${name}" is not known, skipped (and any more of it)`);
}

/** The fields a session read from lines opens with; `mtime` is `startedAt` when no line has a timestamp. */
export function sessionHead(
  reading: LineReading,
  mtime: Date,
  format: TranscriptFormat,
  agent: string,
): Pick<Session, 'id' | 'file' | 'format' | 'startedAt' | 'endedAt' | 'agent' | 'cwd'> {
  return {
    id: reading.sessionId ?? reading.context.stem,
    file: reading.context.file,
    format,
    startedAt: reading.firstTimestamp ?? mtime.toISOString(),
    endedAt: undefined,
    agent: reading.version === undefined ? agent : `${agent} ${reading.version}`,
    ...(reading.cwd === undefined ? {} : { cwd: reading.cwd }),
  };
}
