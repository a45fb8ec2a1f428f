/**
 * dreamd's error hierarchy. Every error says what went wrong, where (file, space) and what to do.
 * Control-flow errors carry data the caller acts on (`retryable`, `status`), as vercel/ai's APICallError does.
 */
export class DreamdError extends Error {
  override readonly name: string = 'DreamdError';
  /** Process exit code the CLI uses for this error: 1 failure, 2 bad usage or config. */
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Invalid configuration or usage: start-up stops and the CLI exits 2. */
export class ConfigError extends DreamdError {
  override readonly name = 'ConfigError';
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A transcript that cannot be read. The file is set aside; the other sessions carry on. */
export class TranscriptError extends DreamdError {
  override readonly name = 'TranscriptError';
  constructor(
    message: string,
    readonly file: string,
    readonly reason: TranscriptErrorReason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const TranscriptErrorReason = {
  invalidJson: 'invalid-json',
  wrongShape: 'wrong-shape',
  empty: 'empty',
  binary: 'binary',
  invalidUtf8: 'invalid-utf8',
  tooBig: 'too-big',
  outsideDirectory: 'outside-directory',
  duplicateId: 'duplicate-id',
  changedWhileRead: 'changed-while-read',
  unreadable: 'unreadable',
  unsafeName: 'unsafe-name',
} as const;
export type TranscriptErrorReason = (typeof TranscriptErrorReason)[keyof typeof TranscriptErrorReason];

/** A memory file that cannot be parsed (e.g. broken frontmatter). It is never overwritten blindly. */
export class MemoryFormatError extends DreamdError {
  override readonly name = 'MemoryFormatError';
  constructor(
    message: string,
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A model call failed. `retryable` says whether the same request may succeed later. */
export class ModelError extends DreamdError {
  override readonly name = 'ModelError';
  /** 2 for missing credentials (a setup to fix, as a ConfigError), else 1. */
  override readonly exitCode: number;
  constructor(
    message: string,
    readonly details: {
      /** HTTP status when the server answered; undefined for timeouts and dropped connections. */
      status?: number | undefined;
      retryable: boolean;
      /** Milliseconds the server asked us to wait (retry-after), when it said. */
      retryAfterMs?: number | undefined;
      kind: ModelErrorKind;
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.exitCode = details.kind === ModelErrorKind.missingCredentials ? 2 : 1;
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get retryable(): boolean {
    return this.details.retryable;
  }
}

/**
 * The model's endpoint has no message batch API: its batch route answered 404, or answered something that is
 * not a message batch (a proxy or gateway that speaks only the Messages API). A run that wanted a batch falls
 * back to ordinary calls and says so; `endpoint` is the base URL asked.
 */
export class NoBatchApiError extends DreamdError {
  override readonly name = 'NoBatchApiError';
  constructor(
    readonly endpoint: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${endpoint} has no message batch API (${detail}); the run made ordinary calls at full price instead. ` +
        'Set model.batch to "never" (DREAMD_MODEL_BATCH=never) for this endpoint.',
      options,
    );
  }
}

/**
 * The results of an ended message batch could not be read (a cut or malformed results file, a results route
 * that keeps failing). Nothing is written; the try is recorded in the batch's record, and the next run tries
 * again. After `maxTries` failed collections the batch is given up and its sessions are sent again.
 */
export class BatchResultsUnreadableError extends DreamdError {
  override readonly name = 'BatchResultsUnreadableError';
  constructor(
    readonly batchId: string,
    readonly space: string,
    readonly tries: number,
    readonly maxTries: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the results of message batch ${batchId} (space "${space}") could not be read: ${detail}. ` +
        `Nothing was written (failed collection ${tries} of ${maxTries}): the next run reads them again, and ` +
        `after ${maxTries} failed collections the batch is given up and its sessions are sent again. ` +
        `To give it up now: dreamd batch cancel ${space}`,
      options,
    );
  }
}

export const ModelErrorKind = {
  rateLimited: 'rate-limited',
  overloaded: 'overloaded',
  server: 'server',
  timeout: 'timeout',
  connection: 'connection',
  badOutput: 'bad-output',
  auth: 'auth',
  badRequest: 'bad-request',
  missingCredentials: 'missing-credentials',
  /** The answer stopped at the output limit (max_tokens / finish_reason length). Never retried as is. */
  outputLimit: 'output-limit',
  /** The model declined to answer (Anthropic stop_reason `refusal`, OpenAI `message.refusal`). Retried. */
  refusal: 'refusal',
  /** The answer's text is longer than the caller accepts (`limits.maxAnswerChars`). Never retried. */
  answerTooLarge: 'answer-too-large',
} as const;
export type ModelErrorKind = (typeof ModelErrorKind)[keyof typeof ModelErrorKind];

/** The space's lock is held by another live run. A manual run reports "busy"; a job retries later. */
export class LockBusyError extends DreamdError {
  override readonly name = 'LockBusyError';
  constructor(
    message: string,
    readonly space: string,
    readonly holder?: { owner: string; pid: number; host: string; startedAt: string },
  ) {
    super(message);
  }
}

/**
 * A run's lock was taken over while it worked (its heartbeat stopped for longer than the stale time: a paused
 * VM, a stalled host). The run discards its plan and writes nothing; its sessions stay pending.
 */
export class LockLostError extends DreamdError {
  override readonly name = 'LockLostError';
  constructor(
    message: string,
    readonly space: string,
    /** Who holds the lock now, when someone does. */
    readonly holder?: { owner: string; pid: number; host: string; startedAt: string },
  ) {
    super(message);
  }
}

/** A path given to a memory tool escapes the memory directory. */
export class PathEscapeError extends DreamdError {
  override readonly name = 'PathEscapeError';
  constructor(
    message: string,
    readonly requested: string,
  ) {
    super(message);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
