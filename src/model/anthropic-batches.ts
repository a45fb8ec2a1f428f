import type Anthropic from '@anthropic-ai/sdk';
import type {
  JSONOutputFormat,
  Message,
  MessageCreateParamsNonStreaming,
  OutputConfig,
} from '@anthropic-ai/sdk/resources/messages';
import type { MessageBatch, MessageBatchResult } from '@anthropic-ai/sdk/resources/messages/batches';
import { z } from 'zod';
import { ModelError, ModelErrorKind, NoBatchApiError } from '../errors.js';
import type { DecodedJson } from './output.js';
import type { RetryingCall } from './retry.js';
import { isMissingRoute } from './sdk-errors.js';
import type { BatchItemResult, BatchState, GenerateObjectRequest, MessageBatches } from './types.js';
import { usageOf } from './usage-of.js';

/**
 * Anthropic's Message Batches API (half-price calls answered within 24 hours): submit, retrieve, cancel and
 * read the results, each call retried as every call is. A batch request is the direct call's parameters.
 */

/** What the batches take of the adapter: its calls, and how it builds and reads a structured call. */
export interface AnthropicBatchCalls {
  readonly withRetries: RetryingCall<Anthropic>;
  readonly baseUrl: string;
  readonly label: string;
  /** A structured call's parameters; its format also carries the SDK's parse function, left out of a batch. */
  readonly objectParams: <T>(
    request: GenerateObjectRequest<T>,
  ) => MessageCreateParamsNonStreaming & { output_config: OutputConfig & { format: JSONOutputFormat } };
  /** The SDK's decoding of an answer's JSON (undefined without any). */
  readonly decode: <T>(message: Message, request: GenerateObjectRequest<T>) => DecodedJson | null | undefined;
  /** An answer read as the request wants it (throws when it is unusable). */
  readonly readObject: <T>(
    message: Message,
    request: GenerateObjectRequest<T>,
    parsed: DecodedJson | null | undefined,
  ) => T;
}

export function anthropicBatches(calls: AnthropicBatchCalls): MessageBatches {
  const { withRetries, baseUrl, label, objectParams, decode, readObject } = calls;

  /** One call of the batch API about a batch (retrieve, cancel), retried as every call is; its state. */
  async function batchCall(
    call: (sdk: Anthropic, options: { signal: AbortSignal } | undefined) => Promise<MessageBatch>,
    signal: AbortSignal | undefined,
  ): Promise<BatchState> {
    const outcome = await withRetries(
      (sdk, callSignal) => call(sdk, callSignal ? { signal: callSignal } : undefined),
      signal,
    );
    return batchState(outcome.value, baseUrl);
  }

  const batches: MessageBatches = {
    async submit(requests, signal) {
      const outcome = await withRetries(
        (sdk, callSignal) =>
          sdk.messages.batches.create(
            {
              requests: requests.map((entry) => {
                // The format's parse function stays here: the batch request carries its JSON schema only.
                const params = objectParams(entry.request);
                const { type, schema } = params.output_config.format;
                return {
                  custom_id: entry.customId,
                  params: { ...params, output_config: { ...params.output_config, format: { type, schema } } },
                };
              }),
            },
            callSignal ? { signal: callSignal } : undefined,
          ),
        signal,
      ).catch((error: unknown) => {
        // No batch route at all (a gateway or proxy of the Messages API alone, which answers 404, 405, 501 or a
        // 400 "not found"): not a fault to retry or fail on. 401 and 403 stay the key's errors.
        if (error instanceof ModelError && isMissingRoute(error)) {
          throw new NoBatchApiError(baseUrl, `POST /v1/messages/batches answered ${error.status}`, {
            cause: error,
          });
        }
        throw error;
      });
      return batchState(outcome.value, baseUrl);
    },
    retrieve: (batchId, signal) =>
      batchCall((sdk, options) => sdk.messages.batches.retrieve(batchId, undefined, options), signal),
    cancel: (batchId, signal) =>
      batchCall((sdk, options) => sdk.messages.batches.cancel(batchId, undefined, options), signal),
    async results<T>(
      batchId: string,
      requestOf: (customId: string) => GenerateObjectRequest<T> | undefined,
      signal?: AbortSignal,
    ) {
      const outcome = await withRetries(async (sdk, callSignal) => {
        const read = new Map<string, BatchItemResult<T>>();
        const lines = await sdk.messages.batches.results(
          batchId,
          {},
          callSignal ? { signal: callSignal } : undefined,
        );
        try {
          for await (const line of lines) {
            const request = requestOf(line.custom_id);
            if (request === undefined) continue;
            read.set(line.custom_id, readBatchResult(line.result, request));
          }
        } catch (error) {
          // A results file cut short or not JSON lines: read again (a cut download), then the caller's to judge.
          if (!(error instanceof SyntaxError)) throw error;
          throw new ModelError(
            `${label}: the results of ${batchId} are not JSON lines after ${read.size} result(s) (${error.message})`,
            { retryable: true, kind: ModelErrorKind.badOutput },
            { cause: error },
          );
        }
        return read;
      }, signal);
      return outcome.value;
    },
  };

  function readBatchResult<T>(
    result: MessageBatchResult,
    request: GenerateObjectRequest<T>,
  ): BatchItemResult<T> {
    switch (result.type) {
      case 'succeeded': {
        const usage = usageOf(result.message);
        const decoded = decode(result.message, request);
        try {
          return { outcome: 'answered', value: readObject(result.message, request, decoded), usage };
        } catch (error) {
          return { outcome: 'unusable', error, usage };
        }
      }
      case 'errored':
        return {
          outcome: 'errored',
          detail: `${result.error.error.type}: ${result.error.error.message}`,
        };
      default:
        return { outcome: result.type, detail: `the request was ${result.type} before it was processed` };
    }
  }
  return batches;
}

/** The fields of a message batch dreamd reads; anything else is not Anthropic's batch API answering. */
const MessageBatchWire = z.object({
  id: z.string().min(1),
  processing_status: z.enum(['in_progress', 'canceling', 'ended']),
  created_at: z.string(),
  expires_at: z.string(),
  request_counts: z.object({
    processing: z.number(),
    succeeded: z.number(),
    errored: z.number(),
    canceled: z.number(),
    expired: z.number(),
  }),
});

/** A message batch as dreamd reads it; NoBatchApiError when the endpoint answered something else. */
function batchState(batch: MessageBatch, endpoint: string): BatchState {
  const parsed = MessageBatchWire.safeParse(batch);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? 'the answer' : issue.path.join('.') || 'the answer';
    throw new NoBatchApiError(
      endpoint,
      `its answer is not a message batch: ${where}: ${issue?.message ?? ''}`,
    );
  }
  const wire = parsed.data;
  return {
    id: wire.id,
    status: wire.processing_status,
    createdAt: wire.created_at,
    expiresAt: wire.expires_at,
    counts: { ...wire.request_counts },
  };
}
