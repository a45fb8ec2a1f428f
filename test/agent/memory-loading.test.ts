import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { activeIndexText, retrieveFacts } from '../../src/agent/memory-prompt.js';
import { createRecall } from '../../src/agent/recall.js';
import { estimateTokensAt } from '../../src/agent/token-count.js';
import type { Space } from '../../src/config/schema.js';
import { SPICY_FACT_TITLE, writeLargeMemory } from '../../harness/large-memory.js';
import { useAgentFixture } from './support/agent-fixture.js';

const agentFixture = useAgentFixture('memory-loading');
const { fake } = agentFixture;
afterEach(() => {
  expect(fake.server.pending).toBe(0);
});

/** A space with its memory folder made. */
async function makeSpace(id: string): Promise<Space> {
  const space = agentFixture.space(id);
  await mkdir(space.memoryDir, { recursive: true });
  return space;
}

type SystemBlocks = Array<{ text: string; cache_control?: unknown }>;

describe('loading memory into a chat (seeds 001 and 004)', () => {
  it('sends MEMORY.md as a cached prefix, topic files on demand, and retrieved facts within 2,000 tokens', async () => {
    const space = await makeSpace('big');
    const memory = await writeLargeMemory(space.memoryDir, 70_000);
    expect(memory.topicBytes).toBeGreaterThanOrEqual(70_000);
    // A stale index line that still links to a superseded fact: the prompt carries active facts only.
    const stale = memory.superseded[0]!;
    await appendFile(
      path.join(space.memoryDir, 'MEMORY.md'),
      `- [Old fact](project.md#${stale}) — stale line\n`,
    );

    const agent = await agentFixture.agent(space);
    fake.server.enqueue({ text: 'Try the mild place on the corner.' });
    const result = await agent.chat('Can you recommend a restaurant for tonight? Nothing spicy please.');
    await agent.end();

    const request = fake.server.requests[0]!;
    const system = request.body.system as SystemBlocks;
    expect(system[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(system[0]!.text).toContain('<memory-context>');
    expect(system[0]!.text).toContain(`[${SPICY_FACT_TITLE}]`);
    expect(system[0]!.text).not.toContain(`#${stale})`);
    // Topic files are not in the prompt: a body that is only in a topic file does not appear in the prefix.
    const topicOnly = memory.facts.find((fact) => fact.status === 'active' && fact.why !== undefined)!;
    expect(system[0]!.text).not.toContain(topicOnly.why!);
    // Retrieved facts: a second, uncached block within the budget, holding the relevant fact.
    expect(system[1]!.cache_control).toBeUndefined();
    expect(system[1]!.text).toContain('<retrieved-memory>');
    expect(system[1]!.text).toContain("doesn't eat spicy food");
    expect(estimateTokensAt(system[1]!.text, 3.5)).toBeLessThanOrEqual(2_000);
    expect(result.retrievedFacts).toContain(memory.facts[0]!.id);
    // The whole system prompt is the index plus at most 2,000 retrieved tokens plus the instructions.
    const indexBytes = Buffer.byteLength(await readFile(path.join(space.memoryDir, 'MEMORY.md'), 'utf8'));
    expect(request.system.length).toBeLessThan(indexBytes + 2_000 * 3.5 + 3_000);
    expect(request.system.length).toBeLessThan(memory.topicBytes / 2);
  });

  it('retrieves nothing for a small memory: one read_memory call brings what the index points to', async () => {
    const space = await makeSpace('small');
    await writeLargeMemory(space.memoryDir, 2_000);
    const agent = await agentFixture.agent(space);
    fake.server.enqueue({ text: 'ok' });
    const result = await agent.chat('Anything spicy tonight?');
    await agent.end();
    expect(fake.server.requests[0]!.body.system as SystemBlocks).toHaveLength(1);
    expect(result.retrievedFacts).toEqual([]);
  });

  it('keeps the retrieved block under its budget and best match first', async () => {
    const space = await makeSpace('budget');
    await writeLargeMemory(space.memoryDir, 30_000);
    const recall = createRecall({ memoryDir: space.memoryDir });
    const few = await retrieveFacts(recall, 'the billing service and the staging queue', {
      budgetTokens: 120,
      charsPerToken: 3.5,
    });
    expect(few.ids.length).toBeGreaterThan(0);
    expect(few.tokens).toBeLessThanOrEqual(120);
    expect(estimateTokensAt(few.text, 3.5)).toBeLessThanOrEqual(120);
    const none = await retrieveFacts(recall, 'zebra xylophone', { budgetTokens: 2_000, charsPerToken: 3.5 });
    expect(none.text).toBe('');
  });

  it('leaves out index lines of superseded facts and nothing else', () => {
    const index = [
      '# Memory index',
      '- [Live](user.md#f-0000000001) — kept',
      '- [Gone](user.md#f-0000000002) — superseded',
      '- [A person’s note](notes/food.md) — kept',
      '',
    ].join('\n');
    expect(activeIndexText(index, new Set(['f-0000000002']))).toBe(
      [
        '# Memory index',
        '- [Live](user.md#f-0000000001) — kept',
        '- [A person’s note](notes/food.md) — kept',
        '',
      ].join('\n'),
    );
  });
});
