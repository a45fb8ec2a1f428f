import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAgent } from '../../src/agent/memory-agent.js';
import { ChatConfig, ModelConfig, type Space } from '../../src/config/schema.js';
import { ConfigError, ModelError } from '../../src/errors.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { useAgentFixture } from './support/agent-fixture.js';

const run = promisify(execFile);
const chatOnce = fileURLToPath(new URL('./support/chat-once.ts', import.meta.url));

const agentFixture = useAgentFixture('memory-agent');
const { fake, space, config } = agentFixture;
afterEach(() => {
  expect(fake.server.pending).toBe(0);
});

async function chatInChildProcess(
  target: Space,
  prompt: string,
): Promise<{ text: string; sessionFile: string }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', chatOnce], {
    env: {
      PATH: process.env.PATH,
      ANTHROPIC_BASE_URL: fake.url,
      MEMORY_DIR: target.memoryDir,
      SESSIONS_DIR: target.sessionsDir,
      PROMPT: prompt,
    },
    cwd: path.resolve(fileURLToPath(new URL('../..', import.meta.url))),
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { text: string; sessionFile: string };
}

describe('memory across two processes (the demo of dreamd chat)', () => {
  it('remembers in process 1 what process 2 uses, through the system prompt', async () => {
    const demo = space('demo');
    fake.server.enqueue(
      (request) => {
        expect(request.body.tools?.map((tool) => tool.name)).toEqual([
          'read_memory',
          'write_memory',
          'forget_memory',
          'recall',
        ]);
        return {
          toolUse: [
            {
              name: 'write_memory',
              id: 'toolu_remember',
              input: {
                type: 'user',
                title: 'No spicy food',
                body: 'The user does not eat spicy food. Avoid spicy cuisines when recommending restaurants.',
              },
            },
          ],
        };
      },
      { text: 'Got it: no spicy places from now on.' },
    );
    const first = await chatInChildProcess(
      demo,
      "Remember that I don't eat spicy food, so don't recommend spicy restaurants",
    );
    expect(first.text).toBe('Got it: no spicy places from now on.');
    expect(fake.server.requests[1]!.prompt).toMatch(/Saved f-[a-z2-7]{10} \\*"No spicy food\\*" in user\.md/);
    expect(fake.server.requests[0]!.system).not.toContain('spicy');

    fake.server.enqueue((request) => ({
      text: request.system.includes('does not eat spicy food')
        ? 'Try the mild Japanese place on Main Street.'
        : 'Try the Sichuan hot-pot place.',
    }));
    const second = await chatInChildProcess(demo, 'Can you recommend a good restaurant nearby?');
    const recorded = fake.server.requests[2]!;
    expect(recorded.system).toContain('<memory-context>');
    expect(recorded.system).toMatch(
      /- \[No spicy food\]\(user\.md#f-[a-z2-7]{10}\) — The user does not eat spicy food/,
    );
    expect(recorded.system).toMatch(/not instructions/);
    expect(recorded.body.messages).toEqual([
      { role: 'user', content: 'Can you recommend a good restaurant nearby?' },
    ]);
    expect(second.text).toBe('Try the mild Japanese place on Main Street.');

    // Both sessions were recorded in the space's sessions directory, for dreamd to consolidate.
    const sessions = await readdir(demo.sessionsDir);
    expect(sessions).toHaveLength(2);
    const firstSession = JSON.parse(await readFile(first.sessionFile, 'utf8')) as {
      agent: string;
      endedAt: string;
      messages: Array<{ role: string }>;
    };
    expect(firstSession.agent).toBe('dreamd-chat');
    expect(firstSession.endedAt).toBeDefined();
    expect(firstSession.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });
});

describe('createMemoryAgent', () => {
  it('keeps one session across several chat calls and recalls from its own space only', async () => {
    const shop = space('shop');
    const repo = space('repo');
    const shopAgent = await agentFixture.agent(shop, { sessionId: 'shop-1' });
    fake.server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              type: 'user',
              title: 'Ramen',
              body: 'Customer loves tonkotsu ramen.',
            },
          },
        ],
      },
      { text: 'Saved.' },
    );
    await shopAgent.chat('I love tonkotsu ramen');
    fake.server.enqueue(
      { toolUse: [{ name: 'recall', input: { query: 'tonkotsu ramen' }, id: 'toolu_shop' }] },
      { text: 'You love ramen.' },
    );
    const again = await shopAgent.chat('What do I like?');
    expect(again.messages).toHaveLength(8);
    expect(JSON.stringify(fake.server.requests.at(-1)!.body.messages.at(-1))).toContain(
      'Customer loves tonkotsu ramen',
    );
    await shopAgent.end();
    await expect(shopAgent.chat('more')).rejects.toBeInstanceOf(ConfigError);

    const repoAgent = await agentFixture.agent(repo);
    expect(repoAgent.system).not.toContain('ramen');
    fake.server.enqueue(
      { toolUse: [{ name: 'recall', input: { query: 'tonkotsu ramen' }, id: 'toolu_repo' }] },
      { text: 'Nothing.' },
    );
    await repoAgent.chat('What do I like?');
    expect(JSON.stringify(fake.server.requests.at(-1)!.body.messages.at(-1))).toContain(
      'Nothing relevant in memory',
    );
    await repoAgent.end();
  });

  it('rewrites a recall query that found nothing across words and languages, once, and counts its tokens', async () => {
    const shop = space('cafe');
    const agent = await agentFixture.agent(shop);
    fake.server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              type: 'project',
              title: 'Última compra',
              body: 'Compra 1 kg de Colômbia.',
            },
          },
        ],
      },
      { text: 'Anotado.' },
    );
    await agent.chat('Anota: compra 1 kg de Colômbia');
    const before = fake.server.requests.length;
    // The model's query shares no word with the note; the rewrite (a small call) bridges "pediu" and "compra".
    fake.server.enqueue(
      {
        toolUse: [
          { name: 'recall', input: { query: 'o que o cliente pediu da última vez' }, id: 'toolu_pedido' },
        ],
        usage: { inputTokens: 1_000, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      {
        text: 'pedido compra comprou encomenda café kg',
        usage: { inputTokens: 70, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      {
        text: 'Da última vez: 1 kg de Colômbia.',
        usage: { inputTokens: 1_100, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    );
    const result = await agent.chat('O que o cliente pediu da última vez?');
    const requests = fake.server.requests.slice(before);
    expect(requests).toHaveLength(3);
    const rewrite = requests[1]!;
    expect(rewrite.system).toContain('You rewrite a search query');
    expect(rewrite.prompt).toContain('Languages: Portuguese');
    expect(rewrite.prompt).toContain('o que o cliente pediu da última vez');
    expect(JSON.stringify(requests[2]!.body.messages.at(-1))).toContain('Compra 1 kg de Colômbia');
    // The rewrite's tokens are in the chat's usage: three calls, not two.
    expect(result.usage).toMatchObject({ inputTokens: 2_170, outputTokens: 31 });
    await agent.end();
  });

  it('does not rewrite with chat.recallRewrite off', async () => {
    const shop = space('cafe-off');
    const agent = await agentFixture.agent(shop, {
      config: { ...config(), chat: ChatConfig.parse({ recallRewrite: false }) },
    });
    fake.server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              type: 'project',
              title: 'Compra',
              body: 'Compra 1 kg.',
            },
          },
        ],
      },
      { text: 'ok' },
      { toolUse: [{ name: 'recall', input: { query: 'pedido anterior' }, id: 'toolu_off' }] },
      { text: 'Não sei.' },
    );
    await agent.chat('Anota');
    const before = fake.server.requests.length;
    await agent.chat('O que pedi?');
    expect(fake.server.requests.slice(before)).toHaveLength(2);
    expect(JSON.stringify(fake.server.requests.at(-1)!.body.messages.at(-1))).toContain(
      'Nothing relevant in memory',
    );
    await agent.end();
  });

  it('continues from what was recorded after a failed call, recording each message once', async () => {
    const agent = await agentFixture.agent(space('flaky'), { sessionId: 'flaky-1' });
    fake.server.enqueue(faults.badRequest('boom'));
    await expect(agent.chat('first')).rejects.toBeInstanceOf(ModelError);
    fake.server.enqueue({ text: 'answered' });
    await agent.chat('second');
    await agent.end();
    expect(fake.server.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'user', content: 'second' },
    ]);
    const recorded = JSON.parse(await readFile(agent.sessionFile, 'utf8')) as {
      messages: Array<{ content: unknown }>;
    };
    expect(recorded.messages.map((message) => message.content)).toEqual([
      'first',
      'second',
      [expect.objectContaining({ type: 'text', text: 'answered' })],
    ]);
  });

  it('offers Anthropic memory tool when asked', async () => {
    const agent = await agentFixture.agent(space('sdk'), { anthropicMemoryTool: true });
    fake.server.enqueue(
      {
        toolUse: [
          { name: 'memory', input: { command: 'create', path: '/memories/tea.md', file_text: 'green tea' } },
        ],
      },
      { text: 'ok' },
    );
    await agent.chat('remember tea');
    await agent.end();
    expect(fake.server.requests[0]!.body.tools?.at(-1)).toEqual({ type: 'memory_20250818', name: 'memory' });
    expect(await readFile(path.join(space('sdk').memoryDir, 'project.md'), 'utf8')).toContain('green tea');
  });

  it("refuses Anthropic's memory tool on an OpenAI-compatible model", async () => {
    const local = ModelConfig.parse({
      provider: 'openai-compatible',
      name: 'qwen3:4b',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    await expect(
      createMemoryAgent({
        space: space('local'),
        config: { model: local, embeddings: undefined },
        anthropicMemoryTool: true,
      }),
    ).rejects.toThrow(/memory_20250818/);
  });

  it('says what to do without a key', async () => {
    await expect(
      createMemoryAgent({
        space: space('x'),
        config: { model: ModelConfig.parse({}), embeddings: undefined },
      }),
    ).rejects.toBeInstanceOf(ModelError);
  });
});
