import { expect, onTestFinished } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../src/errors.js';
import { createAnthropicModel, createOpenAICompatibleModel } from '../../src/model/sdk-models.js';
import type { ModelConfigInput, ProviderOptions } from '../../src/model/provider-options.js';
import type { ModelProvider } from '../../src/model/types.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import type { FakeFault, FakeUsage } from '../../harness/fake-model-server.js';
import { startFakeOpenAIServer } from '../../harness/fake-openai-server.js';

// Shared by the provider tests: the two providers, each with its fake server, and the error a call ends in.

/** What a fake server of either provider answers: what the two fakes' scripts have in common. */
export type CommonReply =
  | FakeFault
  | { readonly json: unknown; readonly usage?: Partial<FakeUsage> }
  | { readonly text: string; readonly usage?: Partial<FakeUsage> };

/** The part of a fake model server (Anthropic or OpenAI-compatible) that a test of either provider uses. */
export interface FakeModelServer {
  readonly url: string;
  readonly requests: ReadonlyArray<{
    readonly receivedAt: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly system: string;
    readonly prompt: string;
  }>;
  enqueue(...replies: CommonReply[]): void;
  setDefault(reply: CommonReply): void;
  close(): Promise<void>;
}

/** A provider under test: its fake server and a model on that server, retrying after 1 ms. */
export interface ProviderUnderTest<Server extends FakeModelServer = FakeModelServer> {
  readonly provider: 'Anthropic' | 'OpenAI-compatible';
  start(): Promise<Server>;
  /** A model on `url`: a key, a model name and the provider set, `config` over them. */
  model(url: string, config?: Partial<ModelConfigInput>): ModelProvider;
}

/** A provider under test whose model is `create` on its fake server: `defaults`, then the test's config. */
function providerUnderTest<Server extends FakeModelServer>(
  provider: ProviderUnderTest['provider'],
  start: () => Promise<Server>,
  create: (config: ModelConfigInput, options: ProviderOptions) => ModelProvider,
  defaults: ModelConfigInput,
): ProviderUnderTest<Server> {
  return {
    provider,
    start,
    model: (url, config = {}) => create({ ...defaults, baseUrl: url, ...config }, { retryBaseDelayMs: 1 }),
  };
}

export const anthropic = providerUnderTest(
  'Anthropic',
  () => startFakeAnthropicServer(),
  createAnthropicModel,
  {
    provider: 'anthropic',
    apiKey: 'sk-ant-test-key',
  },
);

export const openAICompatible = providerUnderTest(
  'OpenAI-compatible',
  () => startFakeOpenAIServer(),
  createOpenAICompatibleModel,
  { provider: 'openai-compatible', name: 'qwen3:8b' },
);

/** An extraction request, its schema and an answer that fits it. */
export const Facts = z.object({
  facts: z.array(
    z.object({ title: z.string().min(1), type: z.enum(['user', 'feedback', 'project', 'reference']) }),
  ),
});
export const answer = { facts: [{ title: 'Prefers pnpm', type: 'user' as const }] };
export const request = {
  system: 'You extract facts worth keeping from agent sessions.',
  prompt: 'Session 2026-11-26: the user says they prefer pnpm over npm.',
  schema: Facts,
  schemaName: 'facts',
};

/** Both providers, for `describe.each`/`it.each`. */
export const providers: readonly ProviderUnderTest[] = [anthropic, openAICompatible];

/** Starts `provider`'s fake server, closed when the test ends; the server and a model on it with `config`. */
export async function onFakeServer<Server extends FakeModelServer>(
  provider: ProviderUnderTest<Server>,
  config: Partial<ModelConfigInput> = {},
): Promise<{ server: Server; model: ModelProvider }> {
  const server = await provider.start();
  onTestFinished(() => server.close());
  return { server, model: provider.model(server.url, config) };
}

/** The ModelError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}
