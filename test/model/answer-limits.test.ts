import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../src/errors.js';
import { createAnthropicModel, createOpenAICompatibleModel } from '../../src/model/sdk-models.js';
import { AnswerTooLargeError } from '../../src/model/output.js';
import type { ModelProvider } from '../../src/model/types.js';
import { faults, startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { startFakeOpenAIServer } from '../../harness/fake-openai-server.js';

/**
 * Both providers, through the real SDKs: an answer longer than `maxAnswerChars` is never parsed nor retried,
 * a refusal has its own kind, and `wireSchema` is what the model is sent while `schema` validates the answer.
 */

const Strict = z.object({
  facts: z.array(z.object({ title: z.string(), type: z.enum(['user', 'project']) })),
});
const Loose = z.object({ facts: z.array(z.unknown()) });
const request = { system: 'Extract facts.', prompt: 'Session text.', schemaName: 'facts' };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

interface Setup {
  readonly model: ModelProvider;
  enqueue(reply: unknown): void;
  readonly requests: () => number;
  /** The JSON schema the last request carried. */
  readonly sentSchema: () => string;
}

async function anthropic(): Promise<Setup> {
  const server = await startFakeAnthropicServer();
  closers.push(() => server.close());
  return {
    model: createAnthropicModel({ apiKey: 'k', baseUrl: server.url, maxRetries: 2 }, { retryBaseDelayMs: 1 }),
    enqueue: (reply) => server.enqueue(reply as never),
    requests: () => server.requests.length,
    sentSchema: () => JSON.stringify(server.requests.at(-1)?.body.output_config),
  };
}

async function openai(): Promise<Setup> {
  const server = await startFakeOpenAIServer();
  closers.push(() => server.close());
  return {
    model: createOpenAICompatibleModel(
      { provider: 'openai-compatible', name: 'qwen3:8b', baseUrl: server.url, maxRetries: 2 },
      { retryBaseDelayMs: 1 },
    ),
    enqueue: (reply) => server.enqueue(reply as never),
    requests: () => server.requests.length,
    sentSchema: () => JSON.stringify(server.requests.at(-1)?.body.response_format),
  };
}

describe.each([
  ['Anthropic', anthropic],
  ['OpenAI-compatible', openai],
])('%s answers read within limits', (_name, setUp) => {
  it('fails an answer over maxAnswerChars with AnswerTooLargeError, once, unparsed', async () => {
    const setup = await setUp();
    setup.enqueue({ json: { facts: [{ title: 'x'.repeat(5_000), type: 'user' }] } });
    const error = await setup.model
      .generateObject({ ...request, schema: Strict, maxAnswerChars: 1_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AnswerTooLargeError);
    expect((error as AnswerTooLargeError).details).toMatchObject({
      kind: 'answer-too-large',
      retryable: false,
    });
    expect((error as AnswerTooLargeError).message).toMatch(
      /more than the 1,000 accepted \(limits\.maxAnswerChars\)/,
    );
    expect(setup.requests()).toBe(1);
  });

  it('sends the wire schema and validates with the schema: an unknown type passes the loose one', async () => {
    const setup = await setUp();
    setup.enqueue({
      json: {
        facts: [
          { title: 'Ok', type: 'user' },
          { title: 'Odd', type: 'opinion' },
        ],
      },
    });
    const result = await setup.model.generateObject({ ...request, schema: Loose, wireSchema: Strict });
    expect(result.value.facts).toHaveLength(2);
    expect(setup.sentSchema()).toContain('"enum":["user","project"]');
  });

  it('gives a refusal its own kind after the retries', async () => {
    const setup = await setUp();
    for (let attempt = 0; attempt < 3; attempt += 1) setup.enqueue(faults.refusal());
    const error = await setup.model
      .generateObject({ ...request, schema: Strict })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).details.kind).toBe('refusal');
    expect(setup.requests()).toBe(3);
  });
});
