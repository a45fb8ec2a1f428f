import { z } from 'zod';
import {
  ReplyQueue,
  TokenCounter,
  faultHeaders,
  isFault,
  schemaBreakingJson,
  sendJson,
  startFakeHttpServer,
  type FakeFault,
  type FakeUsage,
  type HttpExchange,
} from './fake-model-server.js';

/**
 * A fake Anthropic Messages API (`POST /v1/messages`) that the real `@anthropic-ai/sdk` talks to over HTTP.
 * Replies are scripted per request; every request is recorded. Point the SDK at it with `baseURL: server.url`.
 *
 * Structured output (`messages.parse` with `output_config.format`): the SDK reads the JSON from the first
 * text block, so a `{ json }` reply is a text block holding JSON.stringify(json).
 */

export { faults, type FakeFault, type FakeUsage } from './fake-model-server.js';

const TextBlockParam = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: z.looseObject({ type: z.string() }).nullish(),
});

const ContentBlockParam = z.looseObject({ type: z.string() });

/** What the server accepts: the fields dreamd uses, unknown fields kept. */
export const AnthropicRequestBody = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.int().positive(),
  system: z.union([z.string(), z.array(TextBlockParam)]).optional(),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(ContentBlockParam)]),
      }),
    )
    .min(1),
  output_config: z
    .looseObject({
      format: z
        .looseObject({ type: z.string(), schema: z.record(z.string(), z.unknown()).optional() })
        .nullish(),
    })
    .optional(),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  stream: z.boolean().optional(),
});
export type AnthropicRequestBody = z.infer<typeof AnthropicRequestBody>;

export interface RecordedAnthropicRequest {
  /** 0-based position among the requests this server received. */
  readonly index: number;
  /** Epoch ms at which the server took the request up (after its latency, if any). */
  readonly receivedAt: number;
  readonly path: string;
  /** Lower-cased header names: `x-api-key`, `anthropic-version`, … */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: AnthropicRequestBody;
  /** The system prompt's text, blocks joined. */
  readonly system: string;
  /** The text of the last user message (text blocks and tool results joined). */
  readonly prompt: string;
}

type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/** One scripted answer. */
export type AnthropicReply =
  /** Structured output: a text block holding the JSON. */
  | { readonly json: unknown; readonly usage?: Partial<FakeUsage>; readonly stopReason?: StopReason }
  /** Plain text. */
  | { readonly text: string; readonly usage?: Partial<FakeUsage>; readonly stopReason?: StopReason }
  /** The model calls tools: an optional text block, then tool_use blocks; stop_reason `tool_use`. */
  | {
      readonly toolUse: ReadonlyArray<{
        readonly name: string;
        readonly input: unknown;
        readonly id?: string;
      }>;
      readonly text?: string;
      readonly usage?: Partial<FakeUsage>;
    }
  /** Content blocks as they are, for anything else. */
  | {
      readonly content: ReadonlyArray<Record<string, unknown>>;
      readonly stopReason: StopReason;
      readonly usage?: Partial<FakeUsage>;
    }
  | FakeFault;

export type AnthropicScript =
  AnthropicReply | ((request: RecordedAnthropicRequest) => AnthropicReply | Promise<AnthropicReply>);

export interface FakeAnthropicServerOptions {
  /** Milliseconds each request waits before it is answered (benchmarks). Default 0. */
  readonly latencyMs?: number;
  /** Usage fields reported on every answer, over the computed ones (4 characters a token, simulated cache). */
  readonly usage?: Partial<FakeUsage>;
  /**
   * Smallest cached prefix in tokens (4 characters each); a shorter one is billed as plain input, as Claude
   * Haiku 4.5 does below 4,096 tokens. Default 0: every marked prefix is cached.
   */
  readonly minCacheableTokens?: number;
  /** Model ids served by `GET /v1/models`. Default the current and the previous Haiku. */
  readonly models?: readonly string[];
}

export interface FakeAnthropicServer {
  /** Base URL for the SDK: `new Anthropic({ baseURL: server.url })`. */
  readonly url: string;
  /** Every request received, in order, faults included. */
  readonly requests: RecordedAnthropicRequest[];
  /** Headers of every `GET /v1/models` request (doctor's probe), in order. */
  readonly modelListRequests: Readonly<Record<string, string>>[];
  /** Scripts the next answers, first in first out. */
  enqueue(...replies: AnthropicScript[]): void;
  /** Answers requests when the queue is empty; undefined restores "nothing scripted" (a 400). */
  setDefault(handler: AnthropicScript | undefined): void;
  /** Scripted replies not used yet. */
  readonly pending: number;
  /** Bodies of `POST /v1/messages/count_tokens` requests, answered with 4 characters a token. */
  readonly countRequests: unknown[];
  /** Changes the per-request latency, ms. */
  setLatency(latencyMs: number): void;
  /** Message batches created (`POST /v1/messages/batches`), in order. */
  readonly batches: readonly FakeBatch[];
  /** How the batches created from now on end (default: every request answered at the first retrieve). */
  setBatchBehaviour(behaviour: FakeBatchBehaviour): void;
  close(): Promise<void>;
}

/**
 * How a fake message batch ends: after `pollsBeforeEnd` retrieves answered `in_progress` (default 0), with
 * - `complete`: every request answered by the script, as `POST /v1/messages` would answer it;
 * - `expired`: every request expired (the batch passed its 24 hours);
 * - `errored`: every request errored (an `api_error`);
 * - `{ partial: n }`: the first n requests answered, the rest errored;
 * - `gone`: retrieve and results answer 404 (the batch was deleted or never existed).
 * `results` spoils the results download: `cut` ends the file in the middle of its first line (not JSON lines),
 * `{ status }` answers that HTTP status on the results route.
 * `api` plays an endpoint without Anthropic's batch API: `missing` answers 404 on every batch route (a gateway
 * of the Messages API alone), `{ status }` answers that status instead on every batch route (405, 501, or 400 with
 * the error `type` and `message` given; 401 for a key the batch API refuses), `out-of-shape` answers 200 with an object that is not a message batch.
 */
export interface FakeBatchBehaviour {
  readonly api?:
    | 'missing'
    | 'out-of-shape'
    | { readonly status: number; readonly type?: string; readonly message?: string };
  readonly pollsBeforeEnd?: number;
  readonly outcome?: 'complete' | 'expired' | 'errored' | 'gone' | { readonly partial: number };
  readonly results?: 'cut' | { readonly status: number };
}

/** One batch the fake server holds. */
export interface FakeBatch {
  readonly id: string;
  readonly createdAt: Date;
  /** The requests, recorded as `POST /v1/messages` ones are (path `/v1/messages/batches`), in order. */
  readonly requests: readonly RecordedAnthropicRequest[];
  readonly customIds: readonly string[];
  status: 'in_progress' | 'canceling' | 'ended';
  /** Retrieves answered so far. */
  retrieves: number;
  /** Whether a cancel was asked. */
  canceled: boolean;
  /** JSONL result lines, once ended. */
  results: Record<string, unknown>[] | undefined;
  /** How it ends; a test may change it while the batch is in progress (say, to end it at the next look). */
  behaviour: FakeBatchBehaviour;
}

const BatchCreateBody = z.looseObject({
  requests: z
    .array(z.looseObject({ custom_id: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/), params: z.unknown() }))
    .min(1),
});

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export async function startFakeAnthropicServer(
  options: FakeAnthropicServerOptions = {},
): Promise<FakeAnthropicServer> {
  const requests: RecordedAnthropicRequest[] = [];
  const replies = new ReplyQueue<RecordedAnthropicRequest, AnthropicReply>();
  const tokens = new TokenCounter(options.minCacheableTokens ?? 0);
  let messageCount = 0;
  const modelListRequests: Readonly<Record<string, string>>[] = [];
  const models = options.models ?? ['claude-haiku-5-5', 'claude-haiku-4-5'];

  const countRequests: unknown[] = [];
  async function handle(exchange: HttpExchange): Promise<void> {
    if (exchange.method === 'POST' && exchange.path === '/v1/messages/count_tokens') {
      countRequests.push(exchange.json);
      const body = exchange.json as { system?: unknown; messages?: unknown; tools?: unknown };
      const chars = JSON.stringify([body.system ?? '', body.messages ?? [], body.tools ?? []]).length;
      sendJson(exchange.response, 200, { input_tokens: Math.ceil(chars / 4) });
      return;
    }
    if (exchange.method === 'GET' && exchange.path === '/v1/models') {
      modelListRequests.push(exchange.headers);
      const data = models.map((id) => ({
        type: 'model',
        id,
        display_name: id,
        created_at: '2026-01-01T00:00:00Z',
      }));
      sendJson(exchange.response, 200, {
        data,
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      });
      return;
    }
    if (exchange.path.startsWith('/v1/messages/batches')) {
      await handleBatch(exchange);
      return;
    }
    if (exchange.method !== 'POST' || exchange.path !== '/v1/messages') {
      sendError(exchange, 404, `fake-anthropic-server: no route ${exchange.method} ${exchange.path}`);
      return;
    }
    const parsed = AnthropicRequestBody.safeParse(exchange.json);
    if (!parsed.success) {
      sendError(exchange, 400, `fake-anthropic-server: bad request body: ${z.prettifyError(parsed.error)}`);
      return;
    }
    const recorded: RecordedAnthropicRequest = {
      index: requests.length,
      receivedAt: Date.now(),
      path: exchange.path,
      headers: exchange.headers,
      body: parsed.data,
      system: systemText(parsed.data),
      prompt: lastUserText(parsed.data),
    };
    requests.push(recorded);
    if (parsed.data.stream === true) {
      sendError(
        exchange,
        400,
        'fake-anthropic-server: streaming is not supported; use messages.create or messages.parse',
      );
      return;
    }
    const reply = await replies.next(recorded);
    if (reply === undefined) {
      sendError(
        exchange,
        400,
        `fake-anthropic-server: nothing scripted for request #${recorded.index}; enqueue a reply or setDefault`,
      );
      return;
    }
    if (isFault(reply)) {
      answerFault(exchange, recorded, reply);
      return;
    }
    const { content, stopReason } = contentOf(reply);
    sendMessage(exchange, recorded, content, stopReason, reply.usage);
  }

  const batches: FakeBatch[] = [];
  let batchBehaviour: FakeBatchBehaviour = {};

  function batchObject(batch: FakeBatch): Record<string, unknown> {
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (batch.results === undefined) counts.processing = batch.requests.length;
    for (const line of batch.results ?? []) {
      const type = (line['result'] as { type: keyof typeof counts }).type;
      counts[type] += 1;
    }
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.status,
      request_counts: counts,
      created_at: batch.createdAt.toISOString(),
      expires_at: new Date(batch.createdAt.getTime() + 24 * 3_600_000).toISOString(),
      ended_at: batch.status === 'ended' ? new Date().toISOString() : null,
      archived_at: null,
      cancel_initiated_at: batch.canceled ? new Date().toISOString() : null,
      results_url: batch.status === 'ended' ? `${origin()}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  /** Ends a batch: each request's result line, as the behaviour it was created with says. */
  async function endBatch(batch: FakeBatch): Promise<void> {
    const outcome = batch.behaviour.outcome ?? 'complete';
    const results: Record<string, unknown>[] = [];
    for (const [position, recorded] of batch.requests.entries()) {
      const custom_id = batch.customIds[position];
      const answered =
        !batch.canceled &&
        (outcome === 'complete' || (typeof outcome === 'object' && position < outcome.partial));
      if (batch.canceled) results.push({ custom_id, result: { type: 'canceled' } });
      else if (outcome === 'expired') results.push({ custom_id, result: { type: 'expired' } });
      else if (!answered) {
        results.push({
          custom_id,
          result: {
            type: 'errored',
            error: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
          },
        });
      } else {
        const reply = await replies.next(recorded);
        if (
          reply === undefined ||
          (isFault(reply) && reply.fault !== 'max-tokens' && reply.fault !== 'refusal')
        ) {
          results.push({
            custom_id,
            result: {
              type: 'errored',
              error: {
                type: 'error',
                error: { type: 'invalid_request_error', message: 'fake-anthropic-server: nothing scripted' },
              },
            },
          });
          continue;
        }
        const { content, stopReason } = isFault(reply)
          ? reply.fault === 'refusal'
            ? { content: [{ type: 'text', text: 'I can’t help with that.' }], stopReason: 'refusal' as const }
            : {
                content: [{ type: 'text', text: '{"facts": [{"title": "cut of' }],
                stopReason: 'max_tokens' as const,
              }
          : contentOf(reply);
        results.push({
          custom_id,
          result: {
            type: 'succeeded',
            message: messageBody(recorded, content, stopReason, isFault(reply) ? undefined : reply.usage),
          },
        });
      }
    }
    batch.results = results;
    batch.status = 'ended';
  }

  async function handleBatch(exchange: HttpExchange): Promise<void> {
    if (batchBehaviour.api === 'missing') {
      sendError(exchange, 404, `fake-anthropic-server: no route ${exchange.method} ${exchange.path}`);
      return;
    }
    if (typeof batchBehaviour.api === 'object') {
      const { status, type, message } = batchBehaviour.api;
      sendJson(exchange.response, status, {
        type: 'error',
        error: {
          type: type ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
          message: message ?? `fake-anthropic-server: ${exchange.method} ${exchange.path} is not served here`,
        },
      });
      return;
    }
    if (batchBehaviour.api === 'out-of-shape') {
      sendJson(exchange.response, 200, { object: 'list', data: [] });
      return;
    }
    if (exchange.method === 'POST' && exchange.path === '/v1/messages/batches') {
      const parsed = BatchCreateBody.safeParse(exchange.json);
      if (!parsed.success) {
        sendError(exchange, 400, `fake-anthropic-server: bad batch body: ${z.prettifyError(parsed.error)}`);
        return;
      }
      const recorded: RecordedAnthropicRequest[] = [];
      for (const entry of parsed.data.requests) {
        const params = AnthropicRequestBody.safeParse(entry.params);
        if (!params.success) {
          sendError(
            exchange,
            400,
            `fake-anthropic-server: bad params of ${entry.custom_id}: ${z.prettifyError(params.error)}`,
          );
          return;
        }
        recorded.push({
          index: requests.length + recorded.length,
          receivedAt: Date.now(),
          path: exchange.path,
          headers: exchange.headers,
          body: params.data,
          system: systemText(params.data),
          prompt: lastUserText(params.data),
        });
      }
      requests.push(...recorded);
      const batch: FakeBatch = {
        id: `msgbatch_fake_${batches.length + 1}`,
        createdAt: new Date(),
        requests: recorded,
        customIds: parsed.data.requests.map((entry) => entry.custom_id),
        status: 'in_progress',
        retrieves: 0,
        canceled: false,
        results: undefined,
        behaviour: batchBehaviour,
      };
      batches.push(batch);
      sendJson(exchange.response, 200, batchObject(batch));
      return;
    }
    const match = /^\/v1\/messages\/batches\/([^/]+)(\/results|\/cancel)?$/.exec(exchange.path);
    const batch = batches.find((entry) => entry.id === match?.[1]);
    if (match === null || batch === undefined || batch.behaviour.outcome === 'gone') {
      sendError(exchange, 404, `fake-anthropic-server: no batch at ${exchange.method} ${exchange.path}`);
      return;
    }
    if (exchange.method === 'GET' && match[2] === undefined) {
      batch.retrieves += 1;
      if (batch.status !== 'ended' && batch.retrieves > (batch.behaviour.pollsBeforeEnd ?? 0)) {
        await endBatch(batch);
      }
      sendJson(exchange.response, 200, batchObject(batch));
      return;
    }
    if (exchange.method === 'POST' && match[2] === '/cancel') {
      if (batch.status !== 'ended') {
        batch.canceled = true;
        await endBatch(batch);
      }
      sendJson(exchange.response, 200, batchObject(batch));
      return;
    }
    if (exchange.method === 'GET' && match[2] === '/results' && batch.results !== undefined) {
      // The behaviour in force when the results are read (a test may mend the route between collections).
      const spoiled = batchBehaviour.results;
      if (typeof spoiled === 'object') {
        sendError(exchange, spoiled.status, `fake-anthropic-server: results answer ${spoiled.status}`);
        return;
      }
      let text = batch.results.map((line) => JSON.stringify(line)).join('\n') + '\n';
      if (spoiled === 'cut') text = text.slice(0, Math.floor(text.indexOf('\n') / 2));
      exchange.response.writeHead(200, { 'content-type': 'application/binary' });
      exchange.response.end(text);
      return;
    }
    sendError(exchange, 404, `fake-anthropic-server: no route ${exchange.method} ${exchange.path}`);
  }

  function answerFault(exchange: HttpExchange, recorded: RecordedAnthropicRequest, fault: FakeFault): void {
    switch (fault.fault) {
      case 'status':
        sendError(
          exchange,
          fault.status,
          fault.message ?? defaultErrorMessage(fault.status),
          faultHeaders(fault),
        );
        return;
      case 'hang':
        return; // never answered: the client's timeout ends it, or close()
      case 'drop':
        exchange.request.socket.destroy();
        return;
      case 'bad-output':
        sendMessage(
          exchange,
          recorded,
          [
            {
              type: 'text',
              text: schemaBreakingJson(recorded.body.output_config?.format?.schema, fault.output),
            },
          ],
          'end_turn',
        );
        return;
      case 'empty':
        sendMessage(exchange, recorded, [], 'end_turn');
        return;
      case 'refusal':
        sendMessage(exchange, recorded, [{ type: 'text', text: 'I can’t help with that.' }], 'refusal');
        return;
      case 'max-tokens':
        sendMessage(
          exchange,
          recorded,
          [{ type: 'text', text: '{"facts": [{"title": "cut of' }],
          'max_tokens',
        );
        return;
    }
  }

  function messageBody(
    recorded: RecordedAnthropicRequest,
    content: ReadonlyArray<Record<string, unknown>>,
    stopReason: StopReason,
    usage?: Partial<FakeUsage>,
  ): Record<string, unknown> {
    messageCount += 1;
    const counted = tokens.count(
      {
        ...splitCacheable(recorded.body),
        output: JSON.stringify(content),
      },
      { ...options.usage, ...usage },
    );
    return {
      id: `msg_fake_${messageCount}`,
      type: 'message',
      role: 'assistant',
      model: recorded.body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: {
        input_tokens: counted.inputTokens,
        output_tokens: counted.outputTokens,
        cache_creation_input_tokens: counted.cacheWriteTokens,
        cache_read_input_tokens: counted.cacheReadTokens,
        cache_creation: null,
        server_tool_use: null,
        service_tier: recorded.path === '/v1/messages/batches' ? 'batch' : 'standard',
      },
    };
  }

  function sendMessage(
    exchange: HttpExchange,
    recorded: RecordedAnthropicRequest,
    content: ReadonlyArray<Record<string, unknown>>,
    stopReason: StopReason,
    usage?: Partial<FakeUsage>,
  ): void {
    sendJson(exchange.response, 200, messageBody(recorded, content, stopReason, usage), {
      'request-id': `req_fake_${messageCount}`,
    });
  }

  const server = await startFakeHttpServer(
    handle,
    options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs },
  );
  function origin(): string {
    return server.origin;
  }
  return {
    url: server.origin,
    requests,
    modelListRequests,
    enqueue: (...scripts) => replies.enqueue(...scripts),
    setDefault: (handler) => replies.setDefault(handler),
    get pending() {
      return replies.pending;
    },
    countRequests,
    setLatency: (latencyMs) => {
      server.latencyMs = latencyMs;
    },
    batches,
    setBatchBehaviour: (behaviour) => {
      batchBehaviour = behaviour;
    },
    close: () => server.close(),
  };
}

function contentOf(reply: Exclude<AnthropicReply, FakeFault>): {
  content: ReadonlyArray<Record<string, unknown>>;
  stopReason: StopReason;
} {
  if ('toolUse' in reply) {
    const toolBlocks = reply.toolUse.map((call, position) => ({
      type: 'tool_use',
      id: call.id ?? `toolu_fake_${position}_${Math.random().toString(36).slice(2, 10)}`,
      name: call.name,
      input: call.input,
    }));
    const text = reply.text === undefined ? [] : [{ type: 'text', text: reply.text }];
    return { content: [...text, ...toolBlocks], stopReason: 'tool_use' };
  }
  if ('json' in reply) {
    return {
      content: [{ type: 'text', text: JSON.stringify(reply.json) }],
      stopReason: reply.stopReason ?? 'end_turn',
    };
  }
  if ('text' in reply) {
    return { content: [{ type: 'text', text: reply.text }], stopReason: reply.stopReason ?? 'end_turn' };
  }
  return { content: reply.content, stopReason: reply.stopReason };
}

function sendError(
  exchange: HttpExchange,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    exchange.response,
    status,
    {
      type: 'error',
      error: {
        type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
        message,
      },
    },
    headers,
  );
}

function defaultErrorMessage(status: number): string {
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit';
  if (status === 529) return 'Overloaded';
  if (status >= 500) return 'Internal server error';
  if (status === 401) return 'invalid x-api-key';
  return 'Invalid request';
}

function systemText(body: AnthropicRequestBody): string {
  if (body.system === undefined) return '';
  return typeof body.system === 'string' ? body.system : body.system.map((block) => block.text).join('\n');
}

/** System text up to and including the last block marked with cache_control: the cached prefix. */
/**
 * The cached prefix of a request and the rest, as the API splits them: everything up to the last block marked
 * `cache_control` (system blocks first, then message blocks in order) is the prefix.
 */
function splitCacheable(body: AnthropicRequestBody): { cacheablePrefix: string; rest: string } {
  const messageBlocks = body.messages.flatMap((message) =>
    typeof message.content === 'string'
      ? [{ text: message.content, marked: false }]
      : message.content.map((block) => ({
          text: typeof block['text'] === 'string' ? block['text'] : JSON.stringify(block),
          marked: block['cache_control'] != null,
        })),
  );
  const lastMarkedMessage = messageBlocks.findLastIndex((block) => block.marked);
  if (lastMarkedMessage === -1) {
    return {
      cacheablePrefix: cacheableSystemText(body),
      rest: JSON.stringify(body.messages) + uncachedSystemText(body),
    };
  }
  const system =
    typeof body.system === 'string' ? body.system : (body.system ?? []).map((block) => block.text).join('\n');
  return {
    cacheablePrefix: [
      system,
      ...messageBlocks.slice(0, lastMarkedMessage + 1).map((block) => block.text),
    ].join('\n'),
    rest: messageBlocks
      .slice(lastMarkedMessage + 1)
      .map((block) => block.text)
      .join('\n'),
  };
}

function cacheableSystemText(body: AnthropicRequestBody): string {
  if (!Array.isArray(body.system)) return '';
  const lastMarked = body.system.findLastIndex((block) => block.cache_control != null);
  return body.system
    .slice(0, lastMarked + 1)
    .map((block) => block.text)
    .join('\n');
}

function uncachedSystemText(body: AnthropicRequestBody): string {
  if (body.system === undefined) return '';
  if (typeof body.system === 'string') return body.system;
  const lastMarked = body.system.findLastIndex((block) => block.cache_control != null);
  return body.system
    .slice(lastMarked + 1)
    .map((block) => block.text)
    .join('\n');
}

function lastUserText(body: AnthropicRequestBody): string {
  const last = body.messages.findLast((message) => message.role === 'user');
  if (last === undefined) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content
    .map((block) => {
      if (block.type === 'text' && typeof block['text'] === 'string') return block['text'];
      if (block.type === 'tool_result') {
        const content = block['content'];
        if (typeof content === 'string') return content;
        if (Array.isArray(content)) {
          return content
            .map((part: unknown) =>
              typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '',
            )
            .join('');
        }
      }
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}
