import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import { z } from 'zod';
import type { Message, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { GenerateObjectRequest, GenerateTextRequest, ModelResult, SdkModel } from './types.js';
import {
  assertAnswerSize,
  badOutput,
  cachedJsonSchema,
  decodeJsonAnswer,
  inlineLocalRefs,
  OutputLimitError,
  parseJsonOutput,
  refusal,
  unrepresentableSchema,
  validateOutput,
  type DecodedJson,
} from './output.js';
import type { ModelConfig } from '../config/schema.js';
import type { ProviderOptions } from './provider-options.js';
import type { ResolvedModel } from './resolved-model.js';
import { ANTHROPIC_BASE_URL, type ModelEndpoint } from './endpoint.js';
import { rateGateFor } from './rate-gate.js';
import { anthropicChat } from './anthropic-chat.js';
import { anthropicBatches } from './anthropic-batches.js';
import { retriedRequest } from './retried-request.js';
import { usageOf } from './usage-of.js';
import type { SdkErrorClasses } from './sdk-errors.js';
import { sdkClient } from './sdk-client.js';

/** The current Haiku; `model.name` changes it (e.g. `claude-haiku-4-5`). */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-5-5';
export { ANTHROPIC_BASE_URL } from './endpoint.js';
export { usageOf } from './usage-of.js';

/**
 * Sent as the key to an endpoint given by `model.baseUrl` when no key is configured (a local proxy or
 * gateway that needs none). The SDK refuses to send a request without some credential.
 */
const KEYLESS_API_KEY = 'dreamd-no-key';

const ANTHROPIC_ERRORS: SdkErrorClasses = {
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
};

/** The Anthropic provider, with the configured SDK client for callers that need more than one turn. */
export type AnthropicModel = SdkModel<Anthropic>;

/** The adapter's SDK client (or the caller's own, its retries off) and the one retrying call over it. */
function anthropicClient(model: ResolvedModel, options: ProviderOptions) {
  const { config } = model;
  const own = options.client instanceof Anthropic ? options.client : undefined;
  // A caller's own client brings its credentials; otherwise the one credentials rule (providers.ts) applies.
  const endpoint: ModelEndpoint =
    own === undefined
      ? model.checkedEndpoint()
      : { ...model.endpoint, baseUrl: own.baseURL, apiKey: own.apiKey ?? undefined };
  const label = model.shape.label;
  const baseUrl = endpoint.baseUrl ?? ANTHROPIC_BASE_URL;
  const gate = rateGateFor(baseUrl, endpoint.apiKey ?? endpoint.authToken, config.concurrency);
  const { client, withRetries } = sdkClient(
    { own, model, options, baseUrl, gate, errors: ANTHROPIC_ERRORS },
    (sdkOptions) =>
      new Anthropic({
        // With a bearer token and no key, no made-up key: the SDK would send it in place of the token.
        apiKey: endpoint.apiKey ?? (endpoint.authToken !== undefined ? null : KEYLESS_API_KEY),
        authToken: endpoint.authToken ?? null,
        baseURL: baseUrl,
        timeout: config.timeoutMs,
        ...sdkOptions,
      }),
  );
  return { client, withRetries, baseUrl, label };
}

/**
 * The Anthropic Messages API adapter over a model the provider table resolved (`createAnthropicModel` in
 * `sdk-models.ts` resolves and calls it). Throws ModelError `missing-credentials` at once when there is
 * neither a key nor a `baseUrl`, so a daemon fails at start and not in the middle of a job.
 */
export function anthropicAdapter(model: ResolvedModel, options: ProviderOptions = {}): AnthropicModel {
  const { config } = model;
  const { client, withRetries, baseUrl, label } = anthropicClient(model, options);

  // The effort, where the model takes it; other models answer 400 to the field, so it is left out for them.
  function objectParams<T>(request: GenerateObjectRequest<T>) {
    const format = guardedOutputFormat(
      request.wireSchema ?? request.schema,
      request.schemaName,
      label,
      request.maxAnswerChars,
    );
    return {
      model: config.name,
      max_tokens: request.maxOutputTokens ?? config.maxOutputTokens,
      system: cachedSystem(request.system),
      messages: [{ role: 'user' as const, content: userContent(request.prompt, request.promptPrefix) }],
      output_config: { format, ...effortFor(config) },
    };
  }

  /** An answer read as the request wants it: finished, within size, valid (`parsed`: the SDK's decoding). */
  function readObject<T>(
    message: Pick<Message, 'stop_reason' | 'content'>,
    request: GenerateObjectRequest<T>,
    parsed: DecodedJson | null | undefined,
  ): T {
    rejectUnfinished(message, label, request.maxOutputTokens ?? config.maxOutputTokens);
    const text = textOf(message);
    assertAnswerSize(label, text, request.maxAnswerChars);
    // The SDK's parse only decodes the JSON; the caller's schema validates it here, once, so a schema with
    // transforms applies them once. No JSON at all: parseJsonOutput says what came instead.
    if (parsed?.ok === true) return validateOutput(request.schema, parsed.json, request.schemaName, label);
    return parseJsonOutput(request.schema, text, request.schemaName, label);
  }

  async function generateObject<T>(request: GenerateObjectRequest<T>): Promise<ModelResult<T>> {
    return retriedRequest(withRetries, request, async (sdk, signal, count) => {
      const message = await sdk.messages.parse(objectParams(request), signal ? { signal } : undefined);
      count(usageOf(message));
      return readObject(message, request, message.parsed_output);
    });
  }

  const batches = anthropicBatches({
    withRetries,
    baseUrl,
    label,
    objectParams,
    decode: (message, request) =>
      guardedOutputFormat(
        request.wireSchema ?? request.schema,
        request.schemaName,
        label,
        request.maxAnswerChars,
      ).parse(textOf(message)),
    readObject,
  });

  async function generateText(request: GenerateTextRequest): Promise<ModelResult<string>> {
    return retriedRequest(withRetries, request, async (sdk, signal, count) => {
      const message = await sdk.messages.create(
        {
          model: config.name,
          max_tokens: request.maxOutputTokens ?? config.maxOutputTokens,
          system: cachedSystem(request.system),
          messages: [{ role: 'user', content: request.prompt }],
        },
        signal ? { signal } : undefined,
      );
      count(usageOf(message));
      rejectUnfinished(message, label, request.maxOutputTokens ?? config.maxOutputTokens);
      const text = textOf(message);
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
    batches,
    ...anthropicChat({ model: config.name, native: model.native, withRetries }),
    costOf: model.costOf,
  };
}

/**
 * The fixed instructions as one text block marked for prompt caching: repeated calls of a run (and of the
 * next runs within the cache's 5 minutes) read it from the cache at a tenth of the input price.
 */
export function cachedSystem(system: string): TextBlockParam[] {
  return [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }];
}

/**
 * The user turn: the prompt alone, or a stable prefix marked for caching and then the prompt. The mark makes
 * everything up to it (instructions and prefix) one cached prefix, which is what reaches the 4,096 tokens
 * Claude Haiku 4.5 needs before it caches anything; the instructions alone are about 1,100.
 */
export function userContent(prompt: string, prefix: string | undefined): string | TextBlockParam[] {
  if (prefix === undefined) return prompt;
  return [
    { type: 'text', text: prefix, cache_control: { type: 'ephemeral' } },
    { type: 'text', text: prompt },
  ];
}

function textOf(message: Pick<Message, 'content'>): string {
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

/** A refusal or an answer cut off by a limit is bad output, whatever text came with it. */
function rejectUnfinished(message: Pick<Message, 'stop_reason'>, label: string, maxTokens: number): void {
  switch (message.stop_reason) {
    case 'refusal':
      throw refusal(label, 'stop_reason refusal');
    case 'max_tokens':
      throw new OutputLimitError(label, maxTokens);
    case 'model_context_window_exceeded':
      throw badOutput(
        label,
        'the answer was cut off by the context window (stop_reason model_context_window_exceeded)',
      );
    default:
      return;
  }
}

/**
 * The output format handed to `messages.parse`: zodOutputFormat's JSON schema, and a parse that only decodes
 * JSON and never throws. The SDK's own parse throws a plain AnthropicError on a mismatch, indistinguishable
 * from other failures, and would validate a second time. Text over `maxAnswerChars` is not decoded at all
 * (the caller then fails with AnswerTooLargeError).
 */
function guardedOutputFormat(
  schema: z.ZodType,
  schemaName: string,
  label: string,
  maxAnswerChars: number | undefined,
) {
  return {
    type: 'json_schema' as const,
    schema: outputJsonSchema(schema, schemaName, label),
    parse: (content: string): DecodedJson => decodeJsonAnswer(content, maxAnswerChars),
  };
}

/**
 * The JSON schema the model must follow: zodOutputFormat's. A schema with transforms has no JSON schema of
 * its output; the model produces the transform's input, so that side is sent instead.
 */
function outputJsonSchema(schema: z.ZodType, schemaName: string, label: string): Record<string, unknown> {
  return cachedJsonSchema(schema, 'anthropic', () => {
    try {
      return inlineLocalRefs(zodOutputFormat(schema).schema);
    } catch {
      try {
        return transformJSONSchema(z.toJSONSchema(schema, { io: 'input', reused: 'ref' }));
      } catch (error) {
        throw unrepresentableSchema(label, schemaName, error);
      }
    }
  });
}

/**
 * Claude models that take `output_config.effort`: Opus 4.5 and later, and every model of the 5 family. Others
 * reject the field, so it is sent only to these.
 */
export function takesEffort(model: string): boolean {
  return /^claude-(?:[a-z]+-5(?:[-.]|$)|opus-4-(?:[5-9])(?:\b|-))/.test(model);
}

/** The `output_config.effort` of an extraction call for this model config, or nothing. */
export function effortFor(config: Pick<ModelConfig, 'name' | 'effort'>): {
  effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max';
} {
  return config.effort === null || !takesEffort(config.name) ? {} : { effort: config.effort };
}
