import { ModelError, ModelErrorKind, errorMessage } from '../errors.js';

/**
 * Turns the errors of the two Stainless-generated SDKs (`@anthropic-ai/sdk`, `openai`) into ModelError.
 * Both have the same class names with separate hierarchies, so each provider passes its own classes.
 */

type ErrorClass = abstract new (...args: never[]) => Error;

export interface SdkErrorClasses {
  readonly APIError: ErrorClass;
  readonly APIConnectionError: ErrorClass;
  readonly APIConnectionTimeoutError: ErrorClass;
  readonly APIUserAbortError: ErrorClass;
}

export interface ErrorContext {
  /** `anthropic:claude-haiku-5-5` style label that starts every message. */
  readonly label: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** Where the key comes from, for the 401 message. */
  readonly keyHint: string;
  /**
   * True when the API lives under a version path the base URL must include (OpenAI-compatible servers serve
   * `/v1/chat/completions`; the SDK appends only `/chat/completions`). A 404 from a base URL without one says so.
   */
  readonly baseUrlNeedsVersion?: boolean;
}

/** True when the error is the SDK's answer to our own AbortSignal: not a model failure, passed through. */
export function isUserAbort(error: unknown, classes: SdkErrorClasses): boolean {
  return error instanceof classes.APIUserAbortError;
}

export function modelErrorFromSdk(
  error: unknown,
  classes: SdkErrorClasses,
  context: ErrorContext,
): ModelError {
  if (error instanceof ModelError) return error;
  // Timeout is a subclass of connection error in both SDKs: test it first.
  if (error instanceof classes.APIConnectionTimeoutError) {
    return new ModelError(
      `${context.label}: no answer within ${context.timeoutMs} ms (model.timeoutMs)`,
      { retryable: true, kind: ModelErrorKind.timeout },
      { cause: error },
    );
  }
  if (error instanceof classes.APIConnectionError) {
    const cause = error.cause === undefined ? '' : `: ${errorMessage(error.cause)}`;
    return new ModelError(
      `${context.label}: the connection to ${context.baseUrl} failed (${error.message}${cause})`,
      { retryable: true, kind: ModelErrorKind.connection },
      { cause: error },
    );
  }
  if (error instanceof classes.APIError) {
    const { status, headers } = error as Error & { status?: unknown; headers?: unknown };
    if (typeof status === 'number') {
      return modelErrorFromStatus(
        status,
        headers instanceof Headers ? headers : undefined,
        error.message,
        context,
        error,
      );
    }
  }
  return new ModelError(
    `${context.label}: the call failed: ${errorMessage(error)}`,
    { retryable: false, kind: ModelErrorKind.badRequest },
    { cause: error },
  );
}

/**
 * Status to kind: 429 rate-limited, 529 overloaded, 408 timeout, 409 and 5xx but 501 server (retryable);
 * 401/403 auth and other 4xx bad-request (not retryable). An `x-should-retry` header overrides, as the SDKs do.
 */
export function modelErrorFromStatus(
  status: number,
  headers: Headers | undefined,
  serverMessage: string,
  context: ErrorContext,
  cause?: unknown,
): ModelError {
  const retryAfterMs = parseRetryAfterMs(headers);
  const { kind, retryable: retryableByStatus } = classifyStatus(status);
  const shouldRetry = headers?.get('x-should-retry');
  const retryable = shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : retryableByStatus;
  const wait = retryAfterMs === undefined ? '' : `, retry after ${retryAfterMs} ms`;
  const advice =
    kind === ModelErrorKind.auth
      ? `; check the API key (${context.keyHint})`
      : status === 404 && context.baseUrlNeedsVersion === true && lacksVersionPath(context.baseUrl)
        ? `; the base URL ${context.baseUrl} has no version path: add /v1 (e.g. ${withVersionPath(context.baseUrl)})`
        : kind === ModelErrorKind.badRequest
          ? '; the same request will fail again'
          : '';
  return new ModelError(
    `${context.label}: HTTP ${status} (${describeKind(kind)}${wait}): ${serverMessage}${advice}`,
    { status, retryable, retryAfterMs, kind },
    cause === undefined ? undefined : { cause },
  );
}

/** True when the URL's path does not end in a version segment such as `/v1` or `/v1beta`. */
export function lacksVersionPath(baseUrl: string): boolean {
  if (!URL.canParse(baseUrl)) return false;
  return !/\/v\d+[a-z0-9]*\/?$/i.test(new URL(baseUrl).pathname);
}

function withVersionPath(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1`;
}

function classifyStatus(status: number): { kind: ModelErrorKind; retryable: boolean } {
  if (status === 429) return { kind: ModelErrorKind.rateLimited, retryable: true };
  if (status === 529) return { kind: ModelErrorKind.overloaded, retryable: true };
  if (status === 408) return { kind: ModelErrorKind.timeout, retryable: true };
  // 501: the server has no such route or method, so asking again never helps.
  if (status === 501) return { kind: ModelErrorKind.badRequest, retryable: false };
  // 409: a lock timeout on the provider's side; the SDKs retry it too.
  if (status === 409 || status >= 500) return { kind: ModelErrorKind.server, retryable: true };
  if (status === 401 || status === 403) return { kind: ModelErrorKind.auth, retryable: false };
  return { kind: ModelErrorKind.badRequest, retryable: false };
}

function describeKind(kind: ModelErrorKind): string {
  switch (kind) {
    case ModelErrorKind.rateLimited:
      return 'rate limited';
    case ModelErrorKind.overloaded:
      return 'overloaded';
    case ModelErrorKind.timeout:
      return 'request timeout';
    case ModelErrorKind.server:
      return 'server error';
    case ModelErrorKind.auth:
      return 'not authorised';
    default:
      return 'request refused';
  }
}

/**
 * `retry-after-ms` (milliseconds, not standard but sent by OpenAI and Anthropic) wins over `retry-after`
 * (seconds or an HTTP date). A value that is missing, unparseable or negative is ignored.
 */
export function parseRetryAfterMs(
  headers: Headers | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(retryAfter);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** What a server says when the route itself is missing, in an answer of 400. */
const NO_ROUTE =
  /\bnot[ _]found\b|\bno (?:such )?(?:route|endpoint|handler)\b|\bunknown (?:route|url|path|endpoint)\b|\binvalid url\b|\bunrecognized request url\b|\bnot (?:implemented|supported)\b/i;

/**
 * Whether an error says the endpoint has no such route, or does not allow the method there: 404, 405 and 501,
 * or a 400 whose error type or message says "not found" (gateways that answer every unknown path with 400).
 * 401 and 403 are never this: they are the key's.
 */
export function isMissingRoute(error: ModelError): boolean {
  const { status } = error;
  if (status === 404 || status === 405 || status === 501) return true;
  if (status !== 400) return false;
  const body = (error.cause as { error?: unknown } | undefined)?.error;
  const inner = (body as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
  if (inner?.type === 'not_found_error') return true;
  const message = typeof inner?.message === 'string' ? inner.message : error.message;
  return NO_ROUTE.test(message);
}
