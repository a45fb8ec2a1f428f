import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ContentFilterFinishReasonError, LengthFinishReasonError } from 'openai/error';
import { zodResponseFormat } from 'openai/helpers/zod';
import { makeParseableResponseFormat } from 'openai/lib/parser';
import { toStrictJsonSchema } from 'openai/lib/transform';
import type { JSONSchema } from 'openai/lib/jsonschema';
import { z } from 'zod';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type {
  GenerateObjectRequest,
  GenerateTextRequest,
  ModelResult,
  SdkModel,
  TokenUsage,
} from './types.js';
import { emptyUsage } from './types.js';
import {
  assertAnswerSize,
  badOutput,
  cachedJsonSchema,
  decodeJsonAnswer,
  OutputLimitError,
  parseJsonOutput,
  unrepresentableSchema,
  validateOutput,
  refusal,
  type DecodedJson,
} from './output.js';
import type { ProviderOptions } from './provider-options.js';
import type { ResolvedModel } from './resolved-model.js';
import { openAIChat } from './openai-chat.js';
import { retriedRequest } from './retried-request.js';
import { rateGateFor } from './rate-gate.js';
import type { SdkErrorClasses } from './sdk-errors.js';
import { sdkClient } from './sdk-client.js';

/** Sent as the key when none is configured: Ollama, vLLM and LM Studio ignore it; the SDK needs one. */
const KEYLESS_API_KEY = 'dreamd-no-key';

const OPENAI_ERRORS: SdkErrorClasses = {
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
};

/** An OpenAI-compatible provider, with the configured SDK client for callers that need more than one turn. */
export type OpenAICompatibleModel = SdkModel<OpenAI>;

/** The adapter's SDK client (or the caller's own, its retries off) and the one retrying call over it. */
function openAIClient(model: ResolvedModel, options: ProviderOptions) {
  const { config } = model;
  const own = options.client instanceof OpenAI ? options.client : undefined;
  // A caller's own client brings its endpoint and key; otherwise the one credentials rule (providers.ts).
  const endpoint =
    own === undefined ? model.checkedEndpoint() : { baseUrl: own.baseURL, apiKey: own.apiKey ?? undefined };
  const baseUrl = endpoint.baseUrl ?? own?.baseURL ?? '';
  const label = model.shape.label;
  const gate = rateGateFor(baseUrl, endpoint.apiKey, config.concurrency);
  const { client, withRetries } = sdkClient(
    {
      own,
      model,
      options,
      baseUrl,
      gate,
      errors: OPENAI_ERRORS,
      baseUrlNeedsVersion: true,
      providerError: (error) =>
        error instanceof ContentFilterFinishReasonError
          ? badOutput(
              label,
              'the answer was withheld by a content filter (finish_reason content_filter)',
              error,
            )
          : undefined,
    },
    (sdkOptions) =>
      new OpenAI({
        apiKey: endpoint.apiKey ?? KEYLESS_API_KEY,
        baseURL: baseUrl,
        timeout: config.timeoutMs,
        ...sdkOptions,
      }),
  );
  return { client, withRetries, label };
}

/**
 * The adapter for any OpenAI-compatible Chat Completions endpoint (Ollama, vLLM, LM Studio, OpenAI), over a
 * model the provider table resolved (`createOpenAICompatibleModel` in `sdk-models.ts` resolves and calls it).
 * `model.baseUrl` is required and includes the version path, e.g. `http://127.0.0.1:11434/v1` for Ollama.
 * Structured output goes as `response_format: json_schema` (strict) through `chat.completions.parse`.
 */
export function openAICompatibleAdapter(
  model: ResolvedModel,
  options: ProviderOptions = {},
): OpenAICompatibleModel {
  const { config } = model;
  const { client, withRetries, label } = openAIClient(model, options);

  function messages(system: string, prompt: string): ChatCompletionMessageParam[] {
    return [
      { role: 'system', content: system },
      { role: 'user', content: prompt },
    ];
  }

  async function generateObject<T>(request: GenerateObjectRequest<T>): Promise<ModelResult<T>> {
    const responseFormat = guardedResponseFormat(
      request.wireSchema ?? request.schema,
      request.schemaName,
      label,
      request.maxAnswerChars,
    );
    const maxTokens = request.maxOutputTokens ?? config.maxOutputTokens;
    return retriedRequest(withRetries, request, async (sdk, signal, count) => {
      const completion = await sdk.chat.completions
        .parse(
          {
            model: config.name,
            max_tokens: maxTokens,
            messages: messages(
              request.system,
              request.promptPrefix === undefined
                ? request.prompt
                : `${request.promptPrefix}\n${request.prompt}`,
            ),
            response_format: responseFormat,
          },
          signal ? { signal } : undefined,
        )
        .catch((error: unknown) => {
          // The SDK reports finish_reason "length" by throwing; the limit reached is this request's.
          throw error instanceof LengthFinishReasonError
            ? new OutputLimitError(label, maxTokens, error)
            : error;
        });
      count(usageOf(completion));
      const message = completion.choices[0]?.message;
      if (!message) throw badOutput(label, 'the answer had no choices');
      if (message.refusal) throw refusal(label, message.refusal);
      const content = message.content ?? '';
      assertAnswerSize(label, content, request.maxAnswerChars);
      // The SDK's parse only decodes the JSON; the caller's schema validates it here, once (transforms once).
      const parsed = message.parsed;
      if (parsed?.ok === true) return validateOutput(request.schema, parsed.json, request.schemaName, label);
      return parseJsonOutput(request.schema, content, request.schemaName, label);
    });
  }

  async function generateText(request: GenerateTextRequest): Promise<ModelResult<string>> {
    return retriedRequest(withRetries, request, async (sdk, signal, count) => {
      const completion = await sdk.chat.completions.create(
        {
          model: config.name,
          max_tokens: request.maxOutputTokens ?? config.maxOutputTokens,
          messages: messages(request.system, request.prompt),
        },
        signal ? { signal } : undefined,
      );
      count(usageOf(completion));
      const choice = completion.choices[0];
      if (choice?.finish_reason === 'length') {
        throw new OutputLimitError(label, request.maxOutputTokens ?? config.maxOutputTokens);
      }
      if (choice?.message.refusal) throw refusal(label, choice.message.refusal);
      const text = choice?.message.content ?? '';
      if (text.trim() === '') throw badOutput(label, 'the answer was empty');
      return text;
    });
  }

  return {
    ...model.shape,
    serverTools: model.serverTools,
    client,
    withRetries,
    generateObject,
    generateText,
    chat: openAIChat({ model: config.name, withRetries }),
    costOf: model.costOf,
  };
}

/** OpenAI counts cached tokens inside prompt_tokens; dreamd counts them apart, as Anthropic does. */
export function usageOf(completion: Pick<ChatCompletion, 'usage'>): TokenUsage {
  const usage = completion.usage;
  if (!usage) return emptyUsage();
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: Math.max(0, usage.prompt_tokens - cached),
    outputTokens: usage.completion_tokens,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}

/**
 * The response format handed to `chat.completions.parse`: zodResponseFormat's strict JSON schema, and a parse
 * that only decodes JSON and never throws (the SDK's throws a bare SyntaxError or ZodError, and would
 * validate a second time).
 */
function guardedResponseFormat(
  schema: z.ZodType,
  name: string,
  label: string,
  maxAnswerChars: number | undefined,
) {
  return makeParseableResponseFormat<DecodedJson>(
    {
      type: 'json_schema',
      json_schema: {
        name: safeSchemaName(name),
        strict: true,
        schema: strictJsonSchema(schema, name, label),
      },
    },
    (content) => decodeJsonAnswer(content, maxAnswerChars),
  );
}

/**
 * zodResponseFormat's strict schema. A schema with transforms has no JSON schema of its output; the model
 * produces the transform's input, so that side is sent instead.
 */
function strictJsonSchema(schema: z.ZodType, name: string, label: string): Record<string, unknown> {
  return cachedJsonSchema(schema, `openai:${name}`, () => {
    try {
      return zodResponseFormat(schema, safeSchemaName(name)).json_schema.schema ?? {};
    } catch {
      try {
        const inputSide = z.toJSONSchema(schema, { io: 'input', target: 'draft-7' }) as JSONSchema;
        return toStrictJsonSchema(inputSide) as Record<string, unknown>;
      } catch (error) {
        throw unrepresentableSchema(label, name, error);
      }
    }
  });
}

/** OpenAI allows a-z, A-Z, 0-9, `_` and `-` in a schema name, at most 64 characters. */
function safeSchemaName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'output';
}
