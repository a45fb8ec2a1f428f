import type { z } from 'zod';

export type { TokenUsage } from '../core/usage.js';
export { emptyUsage, addUsage } from '../core/usage.js';
import type { TokenUsage } from '../core/usage.js';
import type { ChatRequest, ChatResponse } from './messages.js';
import type { RetryOutcome } from './retry.js';
export type { ChatRequest, ChatResponse, Message, SystemBlock, ToolDefinition } from './messages.js';

export interface GenerateObjectRequest<T> {
  /** Fixed instructions; cached by providers that support prompt caching. */
  readonly system: string;
  /** The variable part (digest, index). */
  readonly prompt: string;
  /**
   * A stable start of the user turn, the same in every call of a run (the stable part of the memory list):
   * sent before `prompt`; Anthropic caches it with the system prompt as one prefix, OpenAI-compatible
   * servers that cache prefixes do so by themselves.
   */
  readonly promptPrefix?: string | undefined;
  /** zod schema of the answer. The provider asks for it as structured output and re-validates it. */
  readonly schema: z.ZodType<T>;
  /** Name of the schema, for providers that want one. */
  readonly schemaName: string;
  /**
   * The schema sent to the model as its structured-output JSON schema, when it is stricter than `schema`
   * (consolidation asks for strict facts but accepts an array of anything, then checks each fact on its own,
   * so one bad fact does not cost the whole answer). Default: `schema`.
   */
  readonly wireSchema?: z.ZodType | undefined;
  /**
   * Longest answer text accepted, in characters; a longer one is never parsed and fails with
   * AnswerTooLargeError (not retried). Default: no limit.
   */
  readonly maxAnswerChars?: number | undefined;
  readonly maxOutputTokens?: number;
  readonly signal?: AbortSignal;
}

export interface GenerateTextRequest {
  readonly system: string;
  readonly prompt: string;
  readonly maxOutputTokens?: number;
  readonly signal?: AbortSignal;
}

export interface ModelResult<T> {
  readonly value: T;
  readonly usage: TokenUsage;
  /** Number of attempts it took (1 = no retry). */
  readonly attempts: number;
}

/**
 * The model port: the one interface consolidation and the agent side talk to a model through. Consolidation
 * makes structured calls (`generateObject`, `generateText`, `batches`); an agent makes chat calls (`chat`,
 * `countTokens`). Every call of one provider goes through the same retry policy (`retry.ts`), waits at the
 * same rate gate (`rate-gate.ts`, one per endpoint and key) and is priced by the same meter (`costOf`).
 * Implementations: Anthropic (`@anthropic-ai/sdk`) and OpenAI-compatible (`openai`), named by the provider
 * table (`providers.ts`) and built by `createModel`. Failures are ModelError.
 */
export interface ModelProvider {
  /** `anthropic:claude-haiku-5-5` style label for logs and run records. */
  readonly label: string;
  generateObject<T>(request: GenerateObjectRequest<T>): Promise<ModelResult<T>>;
  generateText(request: GenerateTextRequest): Promise<ModelResult<string>>;
  /** The provider's batch API, where it has one (Anthropic); undefined: calls go synchronously only. */
  readonly batches?: MessageBatches | undefined;
  /** One turn of a conversation with tools (the agent loop's call). */
  chat(request: ChatRequest): Promise<ChatResponse>;
  /** Exact input tokens of a chat request, from the provider's counting endpoint; absent when it has none. */
  countTokens?(request: Omit<ChatRequest, 'maxTokens'>): Promise<number>;
  /** Context window of the model, in tokens. */
  readonly contextWindow: number;
  /** True when the server compacts long histories itself; the agent loop then leaves the history whole. */
  readonly compactsServerSide: boolean;
  /** True when the server clears old tool results itself. */
  readonly clearsToolResults: boolean;
  /** True when the provider runs Anthropic's server-defined tools (`memory_20250818`). */
  readonly serverTools: boolean;
  /**
   * USD of a call's usage at this model's price (`model.price`, or the price table); undefined when the
   * model has no known price. `batch`: the call went through the batch API.
   */
  costOf(usage: TokenUsage, options?: { readonly batch?: boolean }): number | undefined;
}

/** A provider built over an SDK client (both adapters are), with the client for callers that need more than one turn. */
export interface SdkModel<C> extends ModelProvider {
  /** The SDK client: key, base URL and timeout from the config, the SDK's own retries off. */
  readonly client: C;
  /**
   * Runs one SDK call (for example `messages.create` with tools, in the agent loop) with dreamd's retries and
   * error mapping: failures come out as ModelError, retryable ones are retried with backoff.
   */
  withRetries<R>(
    call: (client: C, signal?: AbortSignal) => Promise<R>,
    signal?: AbortSignal,
  ): Promise<RetryOutcome<R>>;
}

/** The part of a provider the agent loop uses: its chat calls and what it knows about the context window. */
export type ChatProvider = Pick<
  ModelProvider,
  'label' | 'chat' | 'countTokens' | 'contextWindow' | 'compactsServerSide' | 'clearsToolResults'
> &
  Partial<Pick<ModelProvider, 'serverTools' | 'costOf'>>;

/** One request of a message batch: the caller's id (1–64 letters, digits, `_`, `-`) and the call. */
export interface BatchRequest<T> {
  readonly customId: string;
  readonly request: GenerateObjectRequest<T>;
}

/** Where a message batch is: `in_progress`, `canceling`, or `ended` (every request has its result). */
export interface BatchState {
  readonly id: string;
  readonly status: 'in_progress' | 'canceling' | 'ended';
  /** ISO times the provider gives: created, and when it stops processing (24 hours after creation). */
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly counts: {
    readonly processing: number;
    readonly succeeded: number;
    readonly errored: number;
    readonly canceled: number;
    readonly expired: number;
  };
}

/**
 * The result of one request of an ended batch: its answer read as `generateObject` reads one (`value`), or
 * the error reading it gave (`OutputLimitError`, a refusal, an answer too large, bad output), or why it has
 * none (`errored`, `expired`, `canceled`). `usage` is what the request was billed (zero without an answer).
 */
export type BatchItemResult<T> =
  | { readonly outcome: 'answered'; readonly value: T; readonly usage: TokenUsage }
  | { readonly outcome: 'unusable'; readonly error: unknown; readonly usage: TokenUsage }
  | { readonly outcome: 'errored' | 'expired' | 'canceled'; readonly detail: string };

/**
 * A provider's batch API (Anthropic's Message Batches: half price, results within 24 hours). Providers
 * without one leave `ModelProvider.batches` undefined and every call goes synchronously.
 */
export interface MessageBatches {
  submit<T>(requests: readonly BatchRequest<T>[], signal?: AbortSignal): Promise<BatchState>;
  retrieve(batchId: string, signal?: AbortSignal): Promise<BatchState>;
  /**
   * The results of an ended batch by custom id, each read with the request it answers (`requestOf`: its
   * schema and limits; undefined: a custom id the caller does not know, skipped).
   */
  results<T>(
    batchId: string,
    requestOf: (customId: string) => GenerateObjectRequest<T> | undefined,
    signal?: AbortSignal,
  ): Promise<Map<string, BatchItemResult<T>>>;
  cancel(batchId: string, signal?: AbortSignal): Promise<BatchState>;
}
