/**
 * What the Gather step produces: the compact, redacted text of one session (a digest) and the model calls
 * that digests are packed into (batches). See ARCHITECTURE.md, where a run's steps live.
 */

/** One line of a digest, with the index of the session message it came from. */
export interface DigestLine {
  /** `SessionMessage.index` of the message this line renders. */
  readonly message: number;
  /** The line, without its trailing newline. Never contains a newline. */
  readonly text: string;
}

export interface SessionDigest {
  readonly sessionId: string;
  /** YYYY-MM-DD of the session's `startedAt` (as written, so the writer's local date is kept). */
  readonly date: string;
  /** `### session <id> · <date>` followed by one line per kept message line, joined with "\n". */
  readonly text: string;
  /** The header line alone (repeated at the top of every part when a digest is split). */
  readonly header: string;
  /** The lines after the header, in message order. */
  readonly lines: readonly DigestLine[];
  /** Characters of `text`. */
  readonly chars: number;
  /** `estimateTokens(text)`: characters / 4, rounded up. */
  readonly estimatedTokens: number;
  /** Number of secrets replaced by `[REDACTED:<kind>]`. */
  readonly redactions: number;
  /** Messages digested (index >= `fromMessage`), whether or not they produced a line. */
  readonly messagesRead: number;
  /** Index of the first message digested, or undefined when there was none. */
  readonly fromMessage: number | undefined;
  /** Index of the last message digested, or undefined when there was none. */
  readonly toMessage: number | undefined;
}

export interface DigestOptions {
  /** Characters kept of one tool result; the rest is replaced by a `[cut N chars]` marker. Default 200. */
  readonly toolResultChars?: number;
  /** Characters kept of one assistant text. Default 1,200. */
  readonly assistantTextChars?: number;
  /** Characters kept of one user text (or compaction summary): head and tail of a longer paste. Default 16,000. */
  readonly userTextChars?: number;
  /** Digest only messages whose index is at least this (incremental reading). Default 0. */
  readonly fromMessage?: number;
}

/** One session, or one slice of it, inside a batch. */
export interface BatchPart {
  readonly sessionId: string;
  /** First message index of this slice, only when the session was split across batches. */
  readonly fromMessage?: number;
  /** Last message index (inclusive) of this slice, only when the session was split across batches. */
  readonly toMessage?: number;
}

/** What one piece of a batch was made of: a session's header and the lines it carries. */
export interface BatchSegment {
  readonly sessionId: string;
  /** The session header (`### session <id> · <date>`). */
  readonly header: string;
  /** The header as written in the batch, when it is a part (`… · part k`). */
  readonly partHeader?: string | undefined;
  readonly lines: readonly DigestLine[];
}

/** The transcript text of one model call. */
export interface Batch {
  /** Sessions (whole or in part) in this batch, in order, each once. */
  readonly sessionIds: readonly string[];
  /** The digests or digest slices, separated by a blank line. */
  readonly text: string;
  /** `estimateTokens(text)`; at most the budget the batch was planned with. */
  readonly estimatedTokens: number;
  /** Answer tokens the model is expected to need (0 when planned without an output budget). */
  readonly expectedOutputTokens: number;
  readonly parts: readonly BatchPart[];
  /** One per part, in the same order: what `splitBatch` splits. */
  readonly segments: readonly BatchSegment[];
}

export interface PlanBatchesOptions {
  /** Token budget of transcript text in one call (`limits.digestTokensPerCall`, default 24,000). */
  readonly tokensPerCall: number;
  /**
   * Answer tokens one call may need (a share of `model.maxOutputTokens`); a batch closes before its expected
   * answer passes it. Omitted: no output budget.
   */
  readonly outputTokensPerCall?: number;
  /**
   * Facts one answer may hold (`limits.maxFactsPerAnswer`): a batch closes before the facts its user lines may
   * carry (one each, see `expectedFacts`) pass it, so an answer is not cut at the fact limit. Omitted: no limit.
   */
  readonly factsPerCall?: number;
}
