import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, ModelError } from '../../src/errors.js';
import { createModel } from '../../src/model/create-model.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';

const Answer = z.object({ ok: z.boolean() });
const request = { system: 'Answer.', prompt: 'Are you there?', schema: Answer, schemaName: 'answer' };

let anthropic: FakeAnthropicServer;
let openai: FakeOpenAIServer;
beforeEach(async () => {
  [anthropic, openai] = await Promise.all([startFakeAnthropicServer(), startFakeOpenAIServer()]);
});
afterEach(async () => {
  await Promise.all([anthropic.close(), openai.close()]);
});

describe('createModel', () => {
  it('chooses the provider named by the config', async () => {
    anthropic.enqueue({ json: { ok: true } });
    openai.enqueue({ json: { ok: true } });

    const claude = createModel({ apiKey: 'sk-ant-test', baseUrl: anthropic.url });
    const local = createModel({ provider: 'openai-compatible', name: 'llama3.2', baseUrl: openai.url });

    expect(claude.label).toBe('anthropic:claude-haiku-5-5');
    expect(local.label).toBe('openai-compatible:llama3.2');
    await expect(claude.generateObject(request)).resolves.toMatchObject({ value: { ok: true } });
    await expect(local.generateObject(request)).resolves.toMatchObject({ value: { ok: true } });
    expect(anthropic.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(1);
  });

  it('fails at creation, not at the first call, without credentials', () => {
    expect(() => createModel({})).toThrow(ModelError);
    expect(() => createModel({ provider: 'openai-compatible' })).toThrow(ModelError);
  });

  it('rejects an invalid setting with a ConfigError naming the field', () => {
    let caught: unknown;
    try {
      createModel({ apiKey: 'k', timeoutMs: -1 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).field).toBe('model.timeoutMs');
  });
});
