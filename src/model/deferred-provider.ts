import { ModelError, ModelErrorKind } from '../errors.js';
import type { ProviderKind, ProviderShape } from './providers.js';
import type { ChatRequest, MessageBatches, ModelProvider } from './types.js';

/** What a provider is before its SDK loads: shape, features (from the provider table) and cost meter. */
export type DeferredShape = ProviderShape &
  Pick<ProviderKind, 'serverTools' | 'countsTokens' | 'batches'> &
  Pick<ModelProvider, 'costOf'>;

/**
 * A provider whose SDK loads and whose adapter is built at its first call: `load` runs once, and again at
 * the next call after a failed load. Its features (token counting, batches) are the table's, known before.
 */
export function deferredProvider(shape: DeferredShape, load: () => Promise<ModelProvider>): ModelProvider {
  let loading: Promise<ModelProvider> | undefined;
  const loaded = (): Promise<ModelProvider> => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  const batches: MessageBatches = {
    submit: async (requests, signal) => batchesOf(await loaded()).submit(requests, signal),
    retrieve: async (batchId, signal) => batchesOf(await loaded()).retrieve(batchId, signal),
    results: async (batchId, requestOf, signal) =>
      batchesOf(await loaded()).results(batchId, requestOf, signal),
    cancel: async (batchId, signal) => batchesOf(await loaded()).cancel(batchId, signal),
  };
  return {
    label: shape.label,
    contextWindow: shape.contextWindow,
    compactsServerSide: shape.compactsServerSide,
    clearsToolResults: shape.clearsToolResults,
    serverTools: shape.serverTools,
    costOf: shape.costOf,
    generateObject: async (request) => (await loaded()).generateObject(request),
    generateText: async (request) => (await loaded()).generateText(request),
    chat: async (request: ChatRequest) => (await loaded()).chat(request),
    ...(shape.countsTokens
      ? {
          async countTokens(request: Omit<ChatRequest, 'maxTokens'>) {
            const provider = await loaded();
            if (provider.countTokens === undefined) throw noCounting(shape.label);
            return provider.countTokens(request);
          },
        }
      : {}),
    ...(shape.batches ? { batches } : {}),
  };
}

function batchesOf(provider: ModelProvider): MessageBatches {
  if (provider.batches === undefined) {
    throw new ModelError(`${provider.label} has no batch API`, {
      retryable: false,
      kind: ModelErrorKind.badRequest,
    });
  }
  return provider.batches;
}

function noCounting(label: string): ModelError {
  return new ModelError(`${label} has no token-counting endpoint`, {
    retryable: false,
    kind: ModelErrorKind.badRequest,
  });
}
