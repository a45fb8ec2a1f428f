import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropic, onFakeServer, openAICompatible } from './helpers.js';

const Facts = z.object({ facts: z.array(z.string()) });
const request = {
  system: 'You extract facts.',
  promptPrefix: '## Current memory\nf-1 | user | Lives in Lisbon',
  prompt: 'Today is 2026-12-01.\nuser: I moved to Porto.',
  schema: Facts,
  schemaName: 'facts',
};

describe('a stable prompt prefix', () => {
  it('goes to Anthropic as its own user block marked for caching, before the prompt, and is read from the cache', async () => {
    const { server, model } = await onFakeServer(anthropic, { name: 'claude-haiku-4-5', maxRetries: 0 });
    server.setDefault({ json: { facts: [] } });
    await model.generateObject(request);
    const second = await model.generateObject(request);
    expect(server.requests[0]!.body.messages[0]!.content).toEqual([
      { type: 'text', text: request.promptPrefix, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: request.prompt },
    ]);
    expect(second.usage.cacheReadTokens).toBeGreaterThan(0);
  });

  it('goes to an OpenAI-compatible server at the start of the user message', async () => {
    const { server, model } = await onFakeServer(openAICompatible, { maxRetries: 0 });
    server.setDefault({ json: { facts: [] } });
    await model.generateObject(request);
    expect(server.requests[0]!.prompt).toBe(`${request.promptPrefix}\n${request.prompt}`);
  });
});
