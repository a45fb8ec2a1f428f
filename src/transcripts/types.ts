/**
 * The normalized session model every transcript reader produces, whatever the file format.
 * Everything downstream (digest, consolidation, recall) sees only these types.
 */

import type { TranscriptFormat } from '../config/schema.js';
import type { KeepOutSignals } from './keep-out-signals.js';

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

export type MessagePart = TextLikePart | SubagentPart;

type TextLikePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'thinking'; readonly text: string }
  | {
      readonly kind: 'tool-call';
      /** Provider's id (`tool_use.id` / `tool_calls[].id`) when known. */
      readonly id: string | undefined;
      readonly name: string;
      readonly input: unknown;
    }
  | {
      readonly kind: 'tool-result';
      readonly toolCallId: string | undefined;
      /** Text of the result (blocks joined); images replaced by "[image]". */
      readonly text: string;
      readonly isError: boolean;
    };

export interface SubagentPart {
  /**
   * Claude Code: what a sub-agent's own transcript (`<session>/subagents/agent-<id>.jsonl`) says, on the
   * message that holds its result in the main thread. Both texts were written by agents, not the user.
   */
  readonly kind: 'subagent';
  readonly agentId: string;
  /** The `Task` call the sub-agent answered, when known (its result in this message says the same). */
  readonly toolCallId: string | undefined;
  /** The brief the main agent gave it: the first user message of its file. */
  readonly prompt: string;
  /** Its final answer: the text of the last assistant message of its file. */
  readonly answer: string;
}

export interface SessionMessage {
  /** Position in the session, 0-based, stable as the file grows (used for incremental reading). */
  readonly index: number;
  readonly role: MessageRole;
  /** ISO 8601 timestamp when the transcript has one. */
  readonly ts: string | undefined;
  readonly parts: readonly MessagePart[];
  /** Claude Code: a sub-agent's message (`isSidechain`). */
  readonly sidechain?: boolean;
  /** Claude Code: the summary a compaction left in place of older messages (`isCompactSummary`). */
  readonly compactSummary?: boolean;
  /** Claude Code: hook output, local-command echoes and other meta lines (`isMeta`). */
  readonly meta?: boolean;
}

export interface Session {
  readonly id: string;
  /** Absolute path of the transcript file. */
  readonly file: string;
  readonly format: TranscriptFormat;
  /** ISO timestamp: the file's `startedAt`, else the first message's `ts`, else the file's mtime. */
  readonly startedAt: string;
  /** ISO timestamp when the session says it ended. */
  readonly endedAt: string | undefined;
  readonly agent: string | undefined;
  /** The working directory the agent ran in, when the transcript names it (Claude Code's `cwd`). */
  readonly cwd?: string;
  /** Messages with index >= the `fromMessage` the reader was asked for. */
  readonly messages: readonly SessionMessage[];
  /** Number of messages in the whole file (the next incremental read starts here). */
  readonly messageCount: number;
  /**
   * The first message not kept because the reader's `keepChars` were spent (it and every later message were
   * counted, not kept): the next read starts there. Undefined when every message from `fromMessage` was kept.
   */
  readonly keptUntil?: number;
  /** Non-fatal oddities met while reading (skipped lines and why), for `sessions list` and logs. */
  readonly warnings: readonly string[];
  /**
   * Lines and items the reader read and left out of `messages`, by why (Codex: `reasoning`, `injected
   * context`, `event_msg`, …), counted over the whole file. Undefined for formats that do not count them.
   */
  readonly dropped?: Readonly<Record<string, number>>;
  /**
   * What in the whole file may keep the session out of memory (the person's `#dreamd:ignore`, a web or MCP
   * tool: see keep-out-signals.ts), seen over every message, not only those returned; undefined when nothing.
   */
  readonly keepOut?: KeepOutSignals;
}

/**
 * Where a session file stands, as `dreamd sessions list` and the gates see it. `kept-out`: marked not to be
 * learned from (`.dreamd/kept-out.json`): never read by a run, never counted as new or waiting.
 */
export type SessionStatus = 'live' | 'settled' | 'consolidated' | 'broken' | 'kept-out';
