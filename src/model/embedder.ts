import type OpenAI from 'openai';
import type { EmbeddingsConfig } from '../config/schema.js';
import { createRetryingCall, type RetryingCall } from './retry.js';
import { isUserAbort, modelErrorFromSdk } from './sdk-errors.js';

/** Texts sent in one `/embeddings` request. 64 keeps requests small for local servers. */
export const EMBEDDING_BATCH_SIZE = 64;

/** Turns texts into vectors, one per text, in order. */
export type EmbedTexts = (texts: readonly string[]) => Promise<number[][]>;

/** Retries of an embeddings request (a recall waits on it, so fewer than a consolidation call's 4). */
const EMBEDDING_RETRIES = 2;

/**
 * Embeds through the `openai` client, asking for floats (base64 is not served by every local server). The
 * SDK loads at the first call; requests go through the model port's retry policy (two retries: a recall waits on them).
 */
export function createOpenAIEmbedder(config: EmbeddingsConfig): EmbedTexts {
  let call: Promise<RetryingCall<OpenAI>> | undefined;
  const retrying = async (): Promise<RetryingCall<OpenAI>> => {
    const sdk = await import('openai');
    const client = new sdk.default({
      baseURL: config.baseUrl,
      apiKey: config.apiKey ?? 'not-needed',
      maxRetries: 0,
    });
    const label = `embeddings:${config.model}`;
    const errors = {
      APIError: sdk.APIError,
      APIConnectionError: sdk.APIConnectionError,
      APIConnectionTimeoutError: sdk.APIConnectionTimeoutError,
      APIUserAbortError: sdk.APIUserAbortError,
    };
    return createRetryingCall(client, {
      maxRetries: EMBEDDING_RETRIES,
      label,
      options: {},
      isUserAbort: (error) => isUserAbort(error, errors),
      toModelError: (error) =>
        modelErrorFromSdk(error, errors, {
          label,
          baseUrl: config.baseUrl,
          timeoutMs: client.timeout,
          keyHint: 'embeddings.apiKey',
          baseUrlNeedsVersion: true,
        }),
    });
  };
  return async (texts) => {
    call ??= retrying().catch((error: unknown) => {
      call = undefined;
      throw error;
    });
    const withRetries = await call;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += EMBEDDING_BATCH_SIZE) {
      const batch = texts.slice(start, start + EMBEDDING_BATCH_SIZE);
      const { value: response } = await withRetries((client, signal) =>
        client.embeddings.create(
          { model: config.model, input: [...batch], encoding_format: 'float' },
          signal === undefined ? {} : { signal },
        ),
      );
      const ordered = [...response.data].sort((a, b) => a.index - b.index);
      if (ordered.length !== batch.length) {
        throw new Error(
          `${config.baseUrl}/embeddings returned ${ordered.length} vectors for ${batch.length} texts`,
        );
      }
      vectors.push(...ordered.map((item) => item.embedding));
    }
    return vectors;
  };
}
