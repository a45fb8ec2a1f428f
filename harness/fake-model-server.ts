import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Shared parts of the fake model servers (fake-anthropic-server.ts, fake-openai-server.ts): a node:http
 * server on 127.0.0.1 port 0, the queue of scripted replies, the faults, and token counting.
 */

/** A failure the fake server injects instead of an answer. */
export type FakeFault =
  /** An HTTP error with the provider's error body; 429 and 529 get their proper error types. */
  | {
      readonly fault: 'status';
      readonly status: number;
      /** Sent as `retry-after` (seconds, may be fractional). */
      readonly retryAfterSeconds?: number;
      /** Sent as `retry-after-ms`. */
      readonly retryAfterMs?: number;
      /** Sent as `x-should-retry`. */
      readonly shouldRetry?: boolean;
      readonly message?: string;
    }
  /** Never answers; the socket stays open until the client gives up (its timeout) or the server closes. */
  | { readonly fault: 'hang' }
  /** Reads the request, then destroys the socket without a response. */
  | { readonly fault: 'drop' }
  /** A well-formed answer whose JSON breaks the requested schema (or `output`, when given). */
  | { readonly fault: 'bad-output'; readonly output?: unknown }
  /** A well-formed answer with no content. */
  | { readonly fault: 'empty' }
  /** The model declines (Anthropic stop_reason `refusal`, OpenAI `message.refusal`). */
  | { readonly fault: 'refusal' }
  /** The answer is cut off (Anthropic stop_reason `max_tokens`, OpenAI finish_reason `length`). */
  | { readonly fault: 'max-tokens' };

/** Shorthands for the faults. */
export const faults = {
  status: (
    status: number,
    extra: Omit<Extract<FakeFault, { fault: 'status' }>, 'fault' | 'status'> = {},
  ): FakeFault => ({
    fault: 'status',
    status,
    ...extra,
  }),
  rateLimited: (retryAfterSeconds?: number): FakeFault =>
    retryAfterSeconds === undefined
      ? { fault: 'status', status: 429 }
      : { fault: 'status', status: 429, retryAfterSeconds },
  overloaded: (): FakeFault => ({ fault: 'status', status: 529 }),
  serverError: (): FakeFault => ({ fault: 'status', status: 500 }),
  badRequest: (message?: string): FakeFault =>
    message === undefined ? { fault: 'status', status: 400 } : { fault: 'status', status: 400, message },
  unauthorized: (): FakeFault => ({ fault: 'status', status: 401 }),
  hang: (): FakeFault => ({ fault: 'hang' }),
  drop: (): FakeFault => ({ fault: 'drop' }),
  badOutput: (output?: unknown): FakeFault =>
    output === undefined ? { fault: 'bad-output' } : { fault: 'bad-output', output },
  empty: (): FakeFault => ({ fault: 'empty' }),
  refusal: (): FakeFault => ({ fault: 'refusal' }),
  maxTokens: (): FakeFault => ({ fault: 'max-tokens' }),
} as const;

export function isFault(reply: object): reply is FakeFault {
  return 'fault' in reply;
}

/** Token usage a fake server reports; missing fields are computed from the request (see TokenCounter). */
export interface FakeUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/**
 * Usage as a real server would count it, roughly: 4 characters a token; a cacheable system prompt is written
 * to the cache the first time it is seen and read from it afterwards.
 */
export class TokenCounter {
  readonly #cachedPrefixes = new Set<string>();

  /** `minCacheableTokens`: a shorter prefix is not cached and counts as input, as on the real API. Default 0. */
  constructor(private readonly minCacheableTokens = 0) {}

  count(
    parts: { cacheablePrefix: string; rest: string; output: string },
    override?: Partial<FakeUsage>,
  ): FakeUsage {
    const prefixTokens = estimateTokens(parts.cacheablePrefix);
    let cacheReadTokens = 0;
    let cacheWriteTokens = 0;
    if (prefixTokens > 0 && prefixTokens < this.minCacheableTokens) {
      return this.count(
        { cacheablePrefix: '', rest: parts.cacheablePrefix + parts.rest, output: parts.output },
        override,
      );
    }
    if (prefixTokens > 0) {
      if (this.#cachedPrefixes.has(parts.cacheablePrefix)) cacheReadTokens = prefixTokens;
      else cacheWriteTokens = prefixTokens;
      this.#cachedPrefixes.add(parts.cacheablePrefix);
    }
    return {
      inputTokens: estimateTokens(parts.rest),
      outputTokens: estimateTokens(parts.output),
      cacheReadTokens,
      cacheWriteTokens,
      ...override,
    };
  }
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Scripted replies, first in first out; when none is left the default handler answers, and without one the
 * server refuses the request with a 400 saying so (a 400 is not retried, so a missing script shows at once).
 */
export class ReplyQueue<Request, Reply> {
  readonly #queue: Array<Reply | ((request: Request) => Reply | Promise<Reply>)> = [];
  #default: ((request: Request) => Reply | Promise<Reply>) | undefined;

  enqueue(...replies: Array<Reply | ((request: Request) => Reply | Promise<Reply>)>): void {
    this.#queue.push(...replies);
  }

  setDefault(handler: ((request: Request) => Reply | Promise<Reply>) | Reply | undefined): void {
    this.#default =
      handler === undefined || typeof handler === 'function'
        ? (handler as ((request: Request) => Reply | Promise<Reply>) | undefined)
        : () => handler;
  }

  get pending(): number {
    return this.#queue.length;
  }

  async next(request: Request): Promise<Reply | undefined> {
    const scripted = this.#queue.shift() ?? this.#default;
    if (scripted === undefined) return undefined;
    return typeof scripted === 'function'
      ? await (scripted as (request: Request) => Reply | Promise<Reply>)(request)
      : scripted;
  }
}

export interface HttpExchange {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON; undefined when it was empty or not JSON. */
  readonly json: unknown;
  readonly rawBody: string;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

export interface FakeHttpServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Milliseconds each request waits before it is answered. */
  latencyMs: number;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1, port chosen by the OS. `handle` answers every request. */
export async function startFakeHttpServer(
  handle: (exchange: HttpExchange) => Promise<void>,
  options: { latencyMs?: number } = {},
): Promise<FakeHttpServer> {
  const state = { latencyMs: options.latencyMs ?? 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const exchange: HttpExchange = {
        method: request.method ?? 'GET',
        path: (request.url ?? '/').split('?')[0] ?? '/',
        headers: flattenHeaders(request.headers),
        json: parseJsonOrUndefined(rawBody),
        rawBody,
        request,
        response,
      };
      void (async () => {
        if (state.latencyMs > 0) await sleep(state.latencyMs);
        await handle(exchange);
      })().catch((error: unknown) => {
        if (!response.headersSent)
          sendJson(response, 500, { error: { message: `fake server failed: ${String(error)}` } });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get latencyMs() {
      return state.latencyMs;
    },
    set latencyMs(value: number) {
      state.latencyMs = value;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hanging requests hold their sockets open; close them so close() ends.
        server.closeAllConnections();
      }),
  };
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** Headers of a status fault: retry-after, retry-after-ms and x-should-retry as scripted. */
export function faultHeaders(fault: Extract<FakeFault, { fault: 'status' }>): Record<string, string> {
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
  if (fault.shouldRetry !== undefined) headers['x-should-retry'] = String(fault.shouldRetry);
  return headers;
}

/**
 * JSON that breaks a requested JSON schema: an array where an object is expected, else an object.
 * `requested` is the JSON schema the client sent (Anthropic output_config.format.schema, OpenAI
 * response_format.json_schema.schema).
 */
export function schemaBreakingJson(requested: unknown, output?: unknown): string {
  if (output !== undefined) return typeof output === 'string' ? output : JSON.stringify(output);
  const type =
    typeof requested === 'object' && requested !== null ? (requested as { type?: unknown }).type : undefined;
  return type === 'array'
    ? JSON.stringify({ unexpected: 'this breaks the schema' })
    : JSON.stringify(['this', 'breaks', 'the schema']);
}

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function parseJsonOrUndefined(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
