import { z } from 'zod';
import {
  ReplyQueue,
  TokenCounter,
  estimateTokens,
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
 * A fake OpenAI-compatible API that the real `openai` SDK talks to over HTTP: `POST /v1/chat/completions`
 * (structured output is the JSON in `message.content`) and `POST /v1/embeddings` (deterministic vectors).
 * Point the SDK at it with `baseURL: server.url` (which ends in `/v1`).
 */

export { faults, type FakeFault, type FakeUsage } from './fake-model-server.js';

const ChatMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
});

export const ChatRequestBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  max_tokens: z.int().positive().optional(),
  max_completion_tokens: z.int().positive().optional(),
  response_format: z
    .looseObject({
      type: z.string(),
      json_schema: z
        .looseObject({
          name: z.string(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullish(),
        })
        .optional(),
    })
    .optional(),
  tools: z.array(z.looseObject({ type: z.string() })).optional(),
  stream: z.boolean().nullish(),
});
export type ChatRequestBody = z.infer<typeof ChatRequestBody>;

export const EmbeddingsRequestBody = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.int().positive().optional(),
});
export type EmbeddingsRequestBody = z.infer<typeof EmbeddingsRequestBody>;

export interface RecordedChatRequest {
  readonly index: number;
  /** Epoch ms at which the server took the request up (after its latency, if any). */
  readonly receivedAt: number;
  readonly path: string;
  /** Lower-cased header names: `authorization`, … */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ChatRequestBody;
  /** Text of the system (and developer) messages, joined. */
  readonly system: string;
  /** Text of the last user message. */
  readonly prompt: string;
}

export interface RecordedEmbeddingsRequest {
  readonly index: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: EmbeddingsRequestBody;
  /** The inputs, always as a list. */
  readonly inputs: readonly string[];
}

type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export type ChatReply =
  /** Structured output: `message.content` holds JSON.stringify(json). */
  | { readonly json: unknown; readonly usage?: Partial<FakeUsage> }
  | { readonly text: string; readonly usage?: Partial<FakeUsage>; readonly finishReason?: FinishReason }
  /** Tool calls; `arguments` is serialised to JSON; finish_reason `tool_calls`. */
  | {
      readonly toolCalls: ReadonlyArray<{
        readonly name: string;
        readonly arguments: unknown;
        readonly id?: string;
      }>;
      readonly text?: string;
      readonly usage?: Partial<FakeUsage>;
    }
  | FakeFault;

export type ChatScript = ChatReply | ((request: RecordedChatRequest) => ChatReply | Promise<ChatReply>);

/** Only faults can be scripted for embeddings; otherwise the `embed` function answers. */
export type EmbeddingsScript = FakeFault | ((request: RecordedEmbeddingsRequest) => FakeFault | undefined);

export interface FakeOpenAIServerOptions {
  readonly latencyMs?: number;
  readonly usage?: Partial<FakeUsage>;
  /** Embedding of one text. Default hashedBagOfWords (256 dimensions). */
  readonly embed?: (text: string) => number[];
  /** Model ids served by `GET /v1/models`. Default one local model, `llama3.2`. Null: no such route (404). */
  readonly models?: readonly string[] | null;
}

export interface FakeOpenAIServer {
  /** Base URL for the SDK, ending in `/v1`: `new OpenAI({ baseURL: server.url })`. */
  readonly url: string;
  readonly requests: RecordedChatRequest[];
  readonly embeddingRequests: RecordedEmbeddingsRequest[];
  /** Headers of every `GET /v1/models` request (doctor's probe), in order. */
  readonly modelListRequests: Readonly<Record<string, string>>[];
  enqueue(...replies: ChatScript[]): void;
  setDefault(handler: ChatScript | undefined): void;
  readonly pending: number;
  /** Faults for the next embeddings requests, first in first out. */
  enqueueEmbeddings(...scripts: EmbeddingsScript[]): void;
  setLatency(latencyMs: number): void;
  close(): Promise<void>;
}

export async function startFakeOpenAIServer(
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const requests: RecordedChatRequest[] = [];
  const embeddingRequests: RecordedEmbeddingsRequest[] = [];
  const replies = new ReplyQueue<RecordedChatRequest, ChatReply>();
  const embeddingFaults: EmbeddingsScript[] = [];
  const tokens = new TokenCounter();
  const embed = options.embed ?? ((text: string) => hashedBagOfWords(text));
  let completionCount = 0;
  const modelListRequests: Readonly<Record<string, string>>[] = [];
  const models = options.models === undefined ? ['llama3.2'] : options.models;

  async function handle(exchange: HttpExchange): Promise<void> {
    // Like Ollama, vLLM and LM Studio: everything lives under /v1, a base URL without it gets a 404.
    const route = exchange.path.startsWith('/v1/') ? exchange.path.slice(3) : undefined;
    if (exchange.method === 'POST' && route === '/chat/completions') return handleChat(exchange);
    if (exchange.method === 'POST' && route === '/embeddings') return handleEmbeddings(exchange);
    if (exchange.method === 'GET' && route === '/models' && models !== null) {
      modelListRequests.push(exchange.headers);
      const data = models.map((id) => ({ id, object: 'model', created: 1_767_225_600, owned_by: 'fake' }));
      sendJson(exchange.response, 200, { object: 'list', data });
      return;
    }
    sendError(exchange, 404, `fake-openai-server: no route ${exchange.method} ${exchange.path}`);
  }

  async function handleChat(exchange: HttpExchange): Promise<void> {
    const parsed = ChatRequestBody.safeParse(exchange.json);
    if (!parsed.success) {
      sendError(exchange, 400, `fake-openai-server: bad request body: ${z.prettifyError(parsed.error)}`);
      return;
    }
    const recorded: RecordedChatRequest = {
      index: requests.length,
      receivedAt: Date.now(),
      path: exchange.path,
      headers: exchange.headers,
      body: parsed.data,
      system: parsed.data.messages
        .filter((message) => message.role === 'system' || message.role === 'developer')
        .map((message) => textOf(message.content))
        .join('\n'),
      prompt: textOf(parsed.data.messages.findLast((message) => message.role === 'user')?.content),
    };
    requests.push(recorded);
    if (parsed.data.stream === true) {
      sendError(exchange, 400, 'fake-openai-server: streaming is not supported');
      return;
    }
    const reply = await replies.next(recorded);
    if (reply === undefined) {
      sendError(
        exchange,
        400,
        `fake-openai-server: nothing scripted for request #${recorded.index}; enqueue a reply or setDefault`,
      );
      return;
    }
    if (isFault(reply)) {
      answerFault(exchange, recorded, reply);
      return;
    }
    if ('toolCalls' in reply) {
      sendCompletion(exchange, recorded, {
        content: reply.text ?? null,
        toolCalls: reply.toolCalls.map((call, position) => ({
          id: call.id ?? `call_fake_${position}_${Math.random().toString(36).slice(2, 10)}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
        finishReason: 'tool_calls',
        usage: reply.usage,
      });
      return;
    }
    if ('json' in reply) {
      sendCompletion(exchange, recorded, {
        content: JSON.stringify(reply.json),
        finishReason: 'stop',
        usage: reply.usage,
      });
      return;
    }
    sendCompletion(exchange, recorded, {
      content: reply.text,
      finishReason: reply.finishReason ?? 'stop',
      usage: reply.usage,
    });
  }

  function answerFault(exchange: HttpExchange, recorded: RecordedChatRequest, fault: FakeFault): void {
    switch (fault.fault) {
      case 'status':
        sendError(
          exchange,
          fault.status,
          fault.message ?? `fake-openai-server: HTTP ${fault.status}`,
          faultHeaders(fault),
        );
        return;
      case 'hang':
        return;
      case 'drop':
        exchange.request.socket.destroy();
        return;
      case 'bad-output':
        sendCompletion(exchange, recorded, {
          content: schemaBreakingJson(recorded.body.response_format?.json_schema?.schema, fault.output),
          finishReason: 'stop',
        });
        return;
      case 'empty':
        sendCompletion(exchange, recorded, { content: '', finishReason: 'stop' });
        return;
      case 'refusal':
        sendCompletion(exchange, recorded, {
          content: null,
          refusal: 'I can’t help with that.',
          finishReason: 'stop',
        });
        return;
      case 'max-tokens':
        sendCompletion(exchange, recorded, {
          content: '{"facts": [{"title": "cut of',
          finishReason: 'length',
        });
        return;
    }
  }

  function sendCompletion(
    exchange: HttpExchange,
    recorded: RecordedChatRequest,
    answer: {
      content: string | null;
      refusal?: string;
      toolCalls?: ReadonlyArray<Record<string, unknown>>;
      finishReason: FinishReason;
      usage?: Partial<FakeUsage> | undefined;
    },
  ): void {
    completionCount += 1;
    // Servers with prefix caching (OpenAI, vLLM) cache the system prompt automatically.
    const counted = tokens.count(
      {
        cacheablePrefix: recorded.system,
        rest: JSON.stringify(recorded.body.messages.filter((message) => message.role !== 'system')),
        output: (answer.content ?? '') + JSON.stringify(answer.toolCalls ?? []),
      },
      { ...options.usage, ...answer.usage },
    );
    const promptTokens = counted.inputTokens + counted.cacheReadTokens + counted.cacheWriteTokens;
    sendJson(exchange.response, 200, {
      id: `chatcmpl-fake-${completionCount}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: recorded.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: answer.content,
            refusal: answer.refusal ?? null,
            ...(answer.toolCalls ? { tool_calls: answer.toolCalls } : {}),
          },
          finish_reason: answer.finishReason,
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: counted.outputTokens,
        total_tokens: promptTokens + counted.outputTokens,
        prompt_tokens_details: { cached_tokens: counted.cacheReadTokens },
      },
    });
  }

  async function handleEmbeddings(exchange: HttpExchange): Promise<void> {
    const parsed = EmbeddingsRequestBody.safeParse(exchange.json);
    if (!parsed.success) {
      sendError(exchange, 400, `fake-openai-server: bad request body: ${z.prettifyError(parsed.error)}`);
      return;
    }
    const inputs = typeof parsed.data.input === 'string' ? [parsed.data.input] : parsed.data.input;
    const recorded: RecordedEmbeddingsRequest = {
      index: embeddingRequests.length,
      headers: exchange.headers,
      body: parsed.data,
      inputs,
    };
    embeddingRequests.push(recorded);
    const script = embeddingFaults.shift();
    const fault = typeof script === 'function' ? script(recorded) : script;
    if (fault !== undefined) {
      if (fault.fault === 'status') {
        sendError(
          exchange,
          fault.status,
          fault.message ?? `fake-openai-server: HTTP ${fault.status}`,
          faultHeaders(fault),
        );
      } else if (fault.fault === 'drop') {
        exchange.request.socket.destroy();
      } else if (fault.fault !== 'hang') {
        sendError(exchange, 500, `fake-openai-server: fault ${fault.fault} does not apply to embeddings`);
      }
      return;
    }
    const base64 = parsed.data.encoding_format === 'base64';
    sendJson(exchange.response, 200, {
      object: 'list',
      model: parsed.data.model,
      data: inputs.map((text, index) => {
        const vector = embed(text);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
        };
      }),
      usage: {
        prompt_tokens: inputs.reduce((sum, text) => sum + estimateTokens(text), 0),
        total_tokens: inputs.reduce((sum, text) => sum + estimateTokens(text), 0),
      },
    });
  }

  const server = await startFakeHttpServer(
    handle,
    options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs },
  );
  return {
    url: `${server.origin}/v1`,
    requests,
    embeddingRequests,
    modelListRequests,
    enqueue: (...scripts) => replies.enqueue(...scripts),
    setDefault: (handler) => replies.setDefault(handler),
    get pending() {
      return replies.pending;
    },
    enqueueEmbeddings: (...scripts) => {
      embeddingFaults.push(...scripts);
    },
    setLatency: (latencyMs) => {
      server.latencyMs = latencyMs;
    },
    close: () => server.close(),
  };
}

/**
 * A deterministic embedding: words (lower-cased, a plural `s` dropped) hashed into `dimensions` buckets and
 * the vector normalised to length 1, so texts that share words have a high cosine similarity.
 */
export function hashedBagOfWords(text: string, dimensions = 256): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const stem = word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word;
    const bucket = fnv1a(stem) % dimensions;
    vector[bucket] = (vector[bucket] ?? 0) + 1;
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function textOf(content: z.infer<typeof ChatMessage>['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

function sendError(
  exchange: HttpExchange,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const type =
    status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  sendJson(exchange.response, status, { error: { message, type, code: null, param: null } }, headers);
}
