import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAnthropicModel } from '../../src/model/anthropic.js';
import { createOpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';

const Facts = z.object({ facts: z.array(z.string()) });
const request = {
  system: 'You extract facts.',
  promptPrefix: '## Current memory\nf-1 | user | Lives in Lisbon',
  prompt: 'Today is 2026-12-01.\nuser: I moved to Porto.',
  schema: Facts,
  schemaName: 'facts',
};

let closers: (FakeAnthropicServer | FakeOpenAIServer)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((server) => server.close()));
  closers = [];
});

describe('a stable prompt prefix', () => {
  it('goes to Anthropic as its own user block marked for caching, before the prompt, and is read from the cache', async () => {
    const server = await startFakeAnthropicServer({ minCacheableTokens: 1 });
    closers.push(server);
    server.setDefault({ json: { facts: [] } });
    const model = createAnthropicModel({
      name: 'claude-haiku-4-5',
      apiKey: 'sk-ant-test',
      baseUrl: server.url,
      maxRetries: 0,
    });
    await model.generateObject(request);
    const second = await model.generateObject(request);
    expect(server.requests[0]!.body.messages[0]!.content).toEqual([
      { type: 'text', text: request.promptPrefix, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: request.prompt },
    ]);
    expect(second.usage.cacheReadTokens).toBeGreaterThan(0);
  });

  it('goes to an OpenAI-compatible server at the start of the user message', async () => {
    const server = await startFakeOpenAIServer();
    closers.push(server);
    server.setDefault({ json: { facts: [] } });
    const model = createOpenAICompatibleModel({
      provider: 'openai-compatible',
      name: 'qwen3:8b',
      baseUrl: server.url,
      maxRetries: 0,
    });
    await model.generateObject(request);
    expect(server.requests[0]!.prompt).toBe(`${request.promptPrefix}\n${request.prompt}`);
  });
});
