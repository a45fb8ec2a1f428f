import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TranscriptError, TranscriptErrorReason, errorMessage } from '../errors.js';
import type { MessagePart, SubagentPart } from './types.js';
import type { ClaudeCodeAccumulator, SubagentLink } from './claude-code-lines.js';
import { ConversationLine } from './claude-code-lines.js';
import { blocksToParts, dropBlocksOverLimit, type PartCaps } from './normalize-message.js';
import { parseJsonText } from './parse-json-text.js';
import { resolveInside } from './session-path.js';
import { streamLines } from './transcript-bytes.js';
import { transcriptFailure } from './transcript-failure.js';

/**
 * Claude Code's sub-agent transcripts, read with their parent session.
 *
 * Where they are: Claude Code ≥ 2.0 writes each sub-agent (a `Task` / `Agent` call) to
 * `<project>/<sessionId>/subagents/agent-<agentId>.jsonl`; older versions wrote `<project>/agent-<agentId>.jsonl`
 * next to the sessions, with the parent's `sessionId` inside. The parent's tool result of that call names the
 * agent (`toolUseResult.agentId`, and an `agentId: …` trailer in its text), which is how a file is found:
 * by name, no directory listing.
 *
 * What is kept: the brief the main agent gave (the first user message of the file) and the sub-agent's final
 * answer (the text of its last assistant message), as one `subagent` part on the parent's message that holds
 * the result. Its intermediate tool calls are work, not memory.
 *
 * How they count: a sub-agent file is never a session of its own. The scanner does not list it (files in
 * sub-directories are never sessions, and top-level `agent-*.jsonl` files are set aside by name), so it adds
 * nothing to the settled-session gate, and the ledger records only the parent. It is read when the parent's
 * message that names it is read, so exactly once: a parent that grows later is read from its ledger
 * `messageCount` on, and a sub-agent resumed later answers with a new result message, which is read then.
 *
 * A sub-agent file that cannot be read (too big, outside the directory, binary…) costs the parent a warning,
 * never the session.
 */

/** Sub-agent files whose name starts so are Claude Code's own context compaction, not a sub-agent's work. */
const COMPACTION_AGENT_PREFIX = 'agent-acompact';

/** Model name of the placeholder answers Claude Code writes itself. */
const SYNTHETIC_MODEL = '<synthetic>';

/** Pure: lines of one sub-agent file in, its brief and final answer out. */
export interface SubagentSummarizer {
  addLine(text: string): void;
  /** Brief and answer, or undefined when the file holds neither. */
  finish(): { prompt: string; answer: string } | undefined;
}

function textOf(parts: readonly MessagePart[]): string {
  return parts
    .flatMap((part) => (part.kind === 'text' ? [part.text] : []))
    .join('\n')
    .trim();
}

/** Starts reading one sub-agent file; `caps` bound each text as in any transcript. */
export function createSubagentSummarizer(caps: PartCaps): SubagentSummarizer {
  let prompt: string | undefined;
  let answer = '';
  let answerId: string | undefined;
  const ignored: string[] = [];
  return {
    addLine(text) {
      if (text.trim().length === 0) return;
      let value: unknown;
      try {
        value = parseJsonText(text);
      } catch {
        return;
      }
      if (typeof value === 'object' && value !== null && 'message' in value) {
        dropBlocksOverLimit(value.message, caps.blocksPerMessage);
      }
      const parsed = ConversationLine.safeParse(value);
      if (!parsed.success) return;
      const line = parsed.data;
      if (line.isMeta === true || line.message.model === SYNTHETIC_MODEL) return;
      const texts = textOf(blocksToParts(line.message.content, 'sub-agent', ignored, caps));
      ignored.length = 0;
      if (line.type === 'user') {
        if (prompt === undefined && texts !== '') prompt = texts;
        return;
      }
      // Lines that share `message.id` are one answer written block by block; a new id is a newer answer.
      const id = line.message.id;
      if (id !== undefined && id === answerId) {
        if (texts !== '') answer = answer === '' ? texts : `${answer}\n${texts}`;
      } else if (texts !== '') {
        answer = texts;
        answerId = id;
      }
    },
    finish() {
      if (prompt === undefined && answer === '') return undefined;
      return { prompt: prompt ?? '', answer };
    },
  };
}

/** What reading sub-agent files needs from the parent's read. */
export interface SubagentReadContext {
  /** Absolute path of the parent session file (its directory is the project directory). */
  readonly parentFile: string;
  /** The parent's file name without `.jsonl`: Claude Code names the sub-agent directory after it. */
  readonly stem: string;
  readonly sessionsDir: string;
  readonly realSessionsDir: string | undefined;
  /** Largest file read, in bytes (limits.maxSessionBytes), as for any transcript. */
  readonly maxBytes: number;
  readonly caps: PartCaps;
}

/** The two places a sub-agent's file may be, newest layout first. */
function candidatePaths(context: SubagentReadContext, agentId: string): string[] {
  const name = `agent-${agentId}.jsonl`;
  const project = dirname(context.parentFile);
  return [join(project, context.stem, 'subagents', name), join(project, name)];
}

/** The first candidate that exists, checked to be a regular file inside the sessions directory. */
async function locate(
  context: SubagentReadContext,
  agentId: string,
): Promise<{ path: string; realFile: string; stats: Stats } | undefined> {
  for (const path of candidatePaths(context, agentId)) {
    const found = await lstat(path).catch(() => undefined);
    if (found === undefined) continue;
    const realFile = await resolveInside(path, context.sessionsDir, context.realSessionsDir);
    const stats = found.isSymbolicLink() ? await lstat(realFile) : found;
    return { path, realFile, stats };
  }
  return undefined;
}

async function readOne(context: SubagentReadContext, link: SubagentLink): Promise<SubagentPart | undefined> {
  const found = await locate(context, link.agentId);
  if (found === undefined) return undefined;
  const { path, realFile, stats } = found;
  if (!stats.isFile()) throw transcriptFailure(path, TranscriptErrorReason.unreadable, 'not a regular file');
  if (stats.size > context.maxBytes) {
    throw transcriptFailure(
      path,
      TranscriptErrorReason.tooBig,
      `${stats.size} bytes is over the limit of ${context.maxBytes} bytes`,
    );
  }
  if (stats.size === 0) return undefined;
  const summarizer = createSubagentSummarizer(context.caps);
  await streamLines(realFile, path, stats.size, (line) => summarizer.addLine(line));
  const summary = summarizer.finish();
  if (summary === undefined) return undefined;
  return { kind: 'subagent', agentId: link.agentId, toolCallId: link.toolCallId, ...summary };
}

/**
 * Reads the sub-agent file of every result among the parent's kept messages and attaches its brief and
 * answer to that message. Never throws: a file that cannot be read becomes a warning of the parent.
 */
export async function attachSubagents(
  accumulator: ClaudeCodeAccumulator,
  context: SubagentReadContext,
): Promise<void> {
  for (const link of accumulator.subagentLinks()) {
    if (`agent-${link.agentId}`.startsWith(COMPACTION_AGENT_PREFIX)) continue;
    try {
      const part = await readOne(context, link);
      if (part !== undefined) accumulator.attachSubagent(link, part);
    } catch (error) {
      // A TranscriptError's message names the file, the fix and says it was skipped.
      const detail =
        error instanceof TranscriptError ? error.message : `${errorMessage(error)}; it was skipped`;
      accumulator.warn(`sub-agent ${link.agentId} (message ${link.messageIndex}): ${detail}`);
    }
  }
}

/**
 * True for a top-level `agent-<id>.jsonl` of the old layout: a sub-agent's file, read with its parent
 * (see above), never a session of its own. Claude Code names its sessions by UUID, never `agent-…`.
 */
export function isOldLayoutSubagentFile(name: string): boolean {
  return name.startsWith('agent-') && name.endsWith('.jsonl');
}
