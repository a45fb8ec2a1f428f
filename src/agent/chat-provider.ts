import type Anthropic from '@anthropic-ai/sdk';
// The error classes alone (a few ms): the SDK itself loads only where a client is built, so the agent kit stays
// light to import (bench: the agent kit's import).
import * as AnthropicErrors from '@anthropic-ai/sdk/error';
import { ModelError } from '../errors.js';
import { modelErrorFromSdk } from '../model/sdk-errors.js';
import type { TokenUsage } from '../model/types.js';
import { nativeContextManagement, type Message } from './context.js';

/**
 * The one interface the agent loop talks to a model through. Messages stay Anthropic-shaped inside dreamd
 * (text, `tool_use`, `tool_result` blocks: what the recorder stores and the context functions cut); each
 * provider translates them to its wire format and its answer back. Two implementations: Anthropic's Messages
 * API (here) and any OpenAI-compatible Chat Completions endpoint (`openai-chat-provider.ts`).
 */

/** One block of the system prompt. `cache: true` marks the end of a prefix the provider may cache. */
export interface SystemBlock {
  readonly text: string;
  readonly cache?: boolean;
}

export interface ChatRequest {
  readonly system: readonly SystemBlock[];
  readonly messages: readonly Message[];
  /** Tool definitions as `AgentTool.definition` holds them (Anthropic-shaped). */
  readonly tools: readonly Anthropic.ToolUnion[];
  /** `max_tokens` of the answer. */
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
}

export interface ChatResponse {
  /** The answer as Anthropic-shaped blocks: `text` and `tool_use` (ids as the provider gave them). */
  readonly content: Anthropic.ContentBlockParam[];
  /** `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn` or `refusal`. */
  readonly stopReason: string;
  readonly usage: TokenUsage;
}

export interface ChatProvider {
  /** `anthropic:claude-haiku-5-5` style label for errors and logs. */
  readonly label: string;
  /** Context window of the model, in tokens. */
  readonly contextWindow: number;
  /** True when the server compacts long histories itself; the loop then leaves the history whole. */
  readonly compactsServerSide: boolean;
  /** True when the server clears old tool results itself. */
  readonly clearsToolResults: boolean;
  send(request: ChatRequest): Promise<ChatResponse>;
  /** Exact input tokens of a request, from the provider's counting endpoint; absent when it has none. */
  countTokens?(request: Omit<ChatRequest, 'maxTokens'>): Promise<number>;
}

/** Context window of Claude models (every current one). */
export const CLAUDE_CONTEXT_WINDOW = 200_000;
/**
 * Context window assumed for other models: 8,192 tokens, the `num_ctx` small local models commonly run
 * with (Ollama's own default is smaller; vLLM and LM Studio use the model's). Set `chat.contextWindow`.
 */
export const DEFAULT_LOCAL_CONTEXT_WINDOW = 8_192;

export function defaultContextWindow(model: string): number {
  return /^claude-/i.test(model) ? CLAUDE_CONTEXT_WINDOW : DEFAULT_LOCAL_CONTEXT_WINDOW;
}

const SDK_ERRORS = {
  APIError: AnthropicErrors.APIError,
  APIConnectionError: AnthropicErrors.APIConnectionError,
  APIConnectionTimeoutError: AnthropicErrors.APIConnectionTimeoutError,
  APIUserAbortError: AnthropicErrors.APIUserAbortError,
};

export interface AnthropicChatProviderOptions {
  readonly client: Anthropic;
  readonly model: string;
  /** See `RunAgentOptions.contextManagement`. Default `auto`. */
  readonly contextManagement?: 'auto' | 'native' | 'client';
  /** Default 200,000 for Claude models. */
  readonly contextWindow?: number;
}

/**
 * Only the last `cache: true` block carries `cache_control` (Anthropic caches the prefix up to a marked
 * block: tools, then system blocks; one marker is enough and the API allows at most four).
 */
function systemBlocks(system: readonly SystemBlock[]): Anthropic.TextBlockParam[] {
  const lastCached = system.findLastIndex((block) => block.cache === true);
  return system
    .filter((block) => block.text !== '')
    .map((block) => ({
      type: 'text' as const,
      text: block.text,
      ...(block === system[lastCached] ? { cache_control: { type: 'ephemeral' as const } } : {}),
    }));
}

/** What a provider is, known before any call: the part of a ChatProvider that needs no SDK. */
export type ChatProviderShape = Pick<
  ChatProvider,
  'label' | 'contextWindow' | 'compactsServerSide' | 'clearsToolResults'
>;

function anthropicNative(
  model: string,
  contextManagement: AnthropicChatProviderOptions['contextManagement'],
) {
  const native = contextManagement === 'client' ? undefined : nativeContextManagement(model);
  if (contextManagement === 'native' && native === undefined) {
    throw new ModelError(`${model}: Anthropic's native context management is only for Claude models`, {
      retryable: false,
      kind: 'bad-request',
    });
  }
  return native;
}

/** The shape of the provider {@link createAnthropicChatProvider} builds for these options. */
export function anthropicProviderShape(
  options: Omit<AnthropicChatProviderOptions, 'client'>,
): ChatProviderShape {
  const native = anthropicNative(options.model, options.contextManagement);
  return {
    label: `anthropic:${options.model}`,
    contextWindow: options.contextWindow ?? defaultContextWindow(options.model),
    compactsServerSide: native?.compaction === true,
    clearsToolResults: native !== undefined,
  };
}

/**
 * A provider whose SDK is loaded and whose client is built at its first call: `load` runs once (a failed load
 * is tried again at the next call). The agent kit builds its providers from the config this way, so importing
 * it does not load either SDK (about 25 MB and 0.2 s each) until the agent talks to a model.
 */
export function deferredChatProvider(
  shape: ChatProviderShape,
  load: () => Promise<ChatProvider>,
  /** Whether the loaded provider will have `countTokens` (Anthropic's has, an OpenAI-compatible one not). */
  countsTokens: boolean,
): ChatProvider {
  let loading: Promise<ChatProvider> | undefined;
  const provider = (): Promise<ChatProvider> => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  const send: ChatProvider['send'] = async (request) => (await provider()).send(request);
  if (!countsTokens) return { ...shape, send };
  return {
    ...shape,
    send,
    async countTokens(request) {
      const loaded = await provider();
      if (loaded.countTokens === undefined) {
        throw new ModelError(`${shape.label} has no token-counting endpoint`, {
          retryable: false,
          kind: 'bad-request',
        });
      }
      return loaded.countTokens(request);
    },
  };
}

/** The Anthropic Messages API as a ChatProvider, with native context management for Claude models. */
export function createAnthropicChatProvider(options: AnthropicChatProviderOptions): ChatProvider {
  const { client, model } = options;
  const native = anthropicNative(model, options.contextManagement);
  const shape = anthropicProviderShape(options);
  const { label } = shape;
  const toModelError = (error: unknown) =>
    error instanceof AnthropicErrors.APIUserAbortError
      ? error
      : modelErrorFromSdk(error, SDK_ERRORS, {
          label,
          baseUrl: client.baseURL,
          timeoutMs: client.timeout,
          keyHint: 'ANTHROPIC_API_KEY or model.apiKey',
        });
  const params = (request: Omit<ChatRequest, 'maxTokens'>) => ({
    model,
    system: systemBlocks(request.system),
    messages: [...request.messages],
    ...(request.tools.length === 0 ? {} : { tools: [...request.tools] }),
  });
  return {
    ...shape,
    async send(request) {
      const body = { ...params(request), max_tokens: request.maxTokens };
      const requestOptions = request.signal === undefined ? {} : { signal: request.signal };
      let response: Anthropic.Message;
      try {
        response =
          native === undefined
            ? await client.messages.create(body, requestOptions)
            : ((await client.beta.messages.create(
                {
                  ...body,
                  betas: native.betas,
                  context_management: native.context_management,
                } as Anthropic.Beta.MessageCreateParamsNonStreaming,
                requestOptions,
              )) as unknown as Anthropic.Message);
      } catch (error) {
        throw toModelError(error);
      }
      return {
        content: response.content,
        stopReason: response.stop_reason ?? 'end_turn',
        usage: {
          inputTokens: response.usage.input_tokens,
          outputTokens: response.usage.output_tokens,
          cacheReadTokens: response.usage.cache_read_input_tokens ?? 0,
          cacheWriteTokens: response.usage.cache_creation_input_tokens ?? 0,
        },
      };
    },
    async countTokens(request) {
      try {
        const counted = await client.messages.countTokens(
          params(request),
          request.signal === undefined ? {} : { signal: request.signal },
        );
        return counted.input_tokens;
      } catch (error) {
        throw toModelError(error);
      }
    },
  };
}
