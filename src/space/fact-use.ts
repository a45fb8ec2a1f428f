/**
 * How often each fact is read by the agents that use the memory, counted from the transcripts dreamd
 * consolidates: a fact nobody reads is worth less than one read every week, and the index gives the read ones
 * its lines first (within their type). Pure: counting and the state file's text; the run writes the file in
 * its commit, so a count is never doubled nor lost with a crash.
 *
 * A read is, in a session's tool calls:
 * - Claude Code's `Read` of a file of the memory folder (absolute `file_path`);
 * - Anthropic's memory tool `view` of `/memories/<file>`;
 * - dreamd's `read_memory` of a file (relative `path`);
 * - a `recall` result that names a fact (`[f-…]` in the tool result);
 * - and, beside the reads, a citation: Claude Code's system prompt (behind a setting that is off by default) asks
 *   the model to wrap a sentence that uses a memory in `<cc-memory filenames="{comma separated memory file
 *   names}">{sentence}</cc-memory>` tags, never inside tool inputs; each file a tag of the assistant's text names
 *   is used once for that message. Only names of `.md` files inside the memory folder count.
 * Reading a file reads every fact in it: a topic file counts for each of its facts.
 */
import path from 'node:path';
import { z } from 'zod';
import type { Session } from '../transcripts/types.js';
import type { Fact } from '../memory/types.js';
import { TOPIC_FILES } from '../memory/types.js';

/** The state file, inside `.dreamd/`. */
export const FACT_USE_FILE = '.dreamd/fact-use.json';

export const FactUseEntry = z.object({
  /** Reads counted. */
  reads: z.int().min(0),
  /** `YYYY-MM-DD` of the last read. */
  lastRead: z.string(),
});
export type FactUseEntry = z.infer<typeof FactUseEntry>;

export const FactUseFile = z.object({
  version: z.literal(1),
  facts: z.record(z.string(), FactUseEntry),
  /**
   * Per session, the index of the first message not counted yet: a session read again from the start (a
   * retried run, a rollback that reopened it) is never counted twice.
   */
  counted: z.record(z.string(), z.int().min(0)),
});
export type FactUseFile = z.infer<typeof FactUseFile>;

export function emptyFactUse(): FactUseFile {
  return { version: 1, facts: {}, counted: {} };
}

/** The state file's content, or an empty record when it is missing or unreadable (it is rebuilt, never trusted). */
export function parseFactUse(text: string | null): FactUseFile {
  if (text === null) return emptyFactUse();
  try {
    const parsed = FactUseFile.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : emptyFactUse();
  } catch {
    return emptyFactUse();
  }
}

export function serializeFactUse(use: FactUseFile): string {
  const sorted = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${JSON.stringify({ version: 1, facts: sorted(use.facts), counted: sorted(use.counted) }, null, 2)}\n`;
}

/** The file of the memory folder each fact lives in, relative, for matching reads. */
function factsByFile(facts: readonly Fact[]): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const fact of facts) {
    const file = fact.file ?? TOPIC_FILES[fact.type];
    const list = byFile.get(file) ?? [];
    list.push(fact.id);
    byFile.set(file, list);
  }
  return byFile;
}

const FACT_ID = /\[(f-[0-9a-z]{10})\]/g;

function stringField(input: unknown, key: string): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** The memory folder's file a tool call reads, relative, or undefined. */
function fileRead(name: string, input: unknown, memoryDir: string): string | undefined {
  let relative: string | undefined;
  if (name === 'Read') {
    const file = stringField(input, 'file_path');
    if (file !== undefined && path.isAbsolute(file)) relative = path.relative(memoryDir, path.resolve(file));
  } else if (name === 'memory' && stringField(input, 'command') === 'view') {
    const file = stringField(input, 'path');
    if (file?.startsWith('/memories/') === true) relative = file.slice('/memories/'.length);
  } else if (name === 'read_memory') {
    relative = stringField(input, 'path');
  }
  if (relative === undefined || relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    return undefined;
  }
  return path.normalize(relative).split(path.sep).join('/');
}

/** The opening tag of Claude Code's memory citation, with the list of file names it carries. */
const CITATION = /<cc-memory\s+filenames="([^"<>]*)"\s*>/g;

/** The memory folder's files the `<cc-memory>` citations of an assistant's text name, relative, each once. */
export function citedFiles(text: string, memoryDir: string): string[] {
  const root = path.resolve(memoryDir);
  const files = new Set<string>();
  for (const match of text.matchAll(CITATION)) {
    for (const raw of (match[1] ?? '').split(',')) {
      const name = raw.trim();
      if (!name.toLowerCase().endsWith('.md')) continue;
      const relative = path.isAbsolute(name) ? path.relative(root, path.resolve(name)) : path.normalize(name);
      if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) continue;
      files.add(relative.split(path.sep).join('/'));
    }
  }
  return [...files];
}

/** One read found in a transcript: a file of the memory folder, or a fact a recall result named. */
export type MemoryRead =
  | { readonly kind: 'file'; readonly file: string; readonly day: string | undefined }
  | { readonly kind: 'fact'; readonly id: string; readonly day: string | undefined };

/** What one session's new messages read, and where counting stops (the session's message count). */
export interface SessionReads {
  readonly sessionId: string;
  /** The first message index of the messages looked at. */
  readonly from: number;
  /** The session's message count: the next count starts there. */
  readonly to: number;
  /** Reads per message index. */
  readonly reads: readonly (MemoryRead & { readonly index: number })[];
}

/** The reads of a session's messages (those the reader returned), facts not known yet. */
export function collectReads(session: Session, memoryDir: string): SessionReads {
  const root = path.resolve(memoryDir);
  const reads: (MemoryRead & { index: number })[] = [];
  const callNames = new Map<string, string>();
  for (const message of session.messages) {
    const day = message.ts?.slice(0, 10);
    for (const part of message.parts) {
      if (part.kind === 'text' && message.role === 'assistant') {
        for (const file of citedFiles(part.text, root))
          reads.push({ kind: 'file', file, day, index: message.index });
      } else if (part.kind === 'tool-call') {
        if (part.id !== undefined) callNames.set(part.id, part.name);
        const file = fileRead(part.name, part.input, root);
        if (file !== undefined) reads.push({ kind: 'file', file, day, index: message.index });
      } else if (part.kind === 'tool-result') {
        const name = part.toolCallId === undefined ? undefined : callNames.get(part.toolCallId);
        if (name !== 'recall' || part.isError) continue;
        for (const id of new Set([...part.text.matchAll(FACT_ID)].map((match) => match[1] as string))) {
          reads.push({ kind: 'fact', id, day, index: message.index });
        }
      }
    }
  }
  return {
    sessionId: session.id,
    from: session.messages[0]?.index ?? session.messageCount,
    to: session.messageCount,
    reads,
  };
}

/**
 * Adds the reads of messages not counted before to `use` and returns the new record (the input is not changed).
 * Reading a file reads each fact in it; a read of a fact not in `facts` is not counted. `day` dates a read whose
 * message has no timestamp.
 */
export function countFactReads(
  use: FactUseFile,
  sessions: readonly SessionReads[],
  options: { facts: readonly Fact[]; day: string },
): FactUseFile {
  const byFile = factsByFile(options.facts);
  const known = new Set(options.facts.map((fact) => fact.id));
  const facts: Record<string, FactUseEntry> = { ...use.facts };
  const counted: Record<string, number> = { ...use.counted };
  const read = (id: string, day: string): void => {
    const before = facts[id];
    facts[id] = {
      reads: (before?.reads ?? 0) + 1,
      lastRead: before === undefined || before.lastRead < day ? day : before.lastRead,
    };
  };
  for (const session of sessions) {
    const from = counted[session.sessionId] ?? 0;
    for (const found of session.reads) {
      if (found.index < from) continue;
      const day = found.day ?? options.day;
      if (found.kind === 'file') for (const id of byFile.get(found.file) ?? []) read(id, day);
      else if (known.has(found.id)) read(found.id, day);
    }
    counted[session.sessionId] = Math.max(from, session.to);
  }
  return { version: 1, facts, counted };
}

/** Read and never-read active facts, for `memory show` and the run record. */
export function summarizeFactUse(
  facts: readonly Fact[],
  use: FactUseFile,
): { used: number; neverUsed: number } {
  let used = 0;
  let neverUsed = 0;
  for (const fact of facts) {
    if (fact.status !== 'active') continue;
    if ((use.facts[fact.id]?.reads ?? 0) > 0) used += 1;
    else neverUsed += 1;
  }
  return { used, neverUsed };
}
