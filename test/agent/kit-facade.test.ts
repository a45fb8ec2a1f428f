import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import * as real from '../../src/agent/index.js';
import * as kit from '../../src/agent-kit.js';
import { makeFolder, useTempDir } from '../support/fixtures.js';
import { writeUserSession } from './helpers.js';

// The agent kit's functions load their module at first use; each must behave as the function it stands for.

const folder = useTempDir('kit-facade');
let memoryDir: string;
let sessionsDir: string;
beforeEach(async () => {
  memoryDir = await makeFolder(folder.path, 'memory');
  sessionsDir = await makeFolder(folder.path, 'sessions');
});

const spoken = (text: string) => [{ role: 'user' as const, content: text }];

describe("the agent kit's deferred functions", () => {
  it('offers the memory tools with the definitions of the real ones, and runs them', async () => {
    const tools = kit.createMemoryTools({ memoryDir, spaceId: 'kit' });
    const expected = real.createMemoryTools({ memoryDir, spaceId: 'kit' });
    expect(tools.tools.map((tool) => tool.definition)).toEqual(expected.tools.map((tool) => tool.definition));
    const saved = await tools.writeMemory.handler(
      { type: 'user', title: 'Food', body: 'The user does not eat spicy food.' },
      { messages: spoken('I do not eat spicy food.') },
    );
    expect(saved).toMatch(/^Saved f-/);
    expect(await tools.readMemory.handler({})).toContain('Food');
    await expect(tools.forgetMemory.handler({})).rejects.toThrow(/Invalid input for forget_memory/);
  });

  it('recalls through the recall of the real module, as a tool too', async () => {
    await kit
      .createMemoryTools({ memoryDir, spaceId: 'kit' })
      .writeMemory.handler(
        { type: 'user', title: 'Cat', body: 'The user has a cat called Luna.' },
        { messages: spoken('I have a cat called Luna.') },
      );
    const recall = kit.createRecall({ memoryDir });
    expect(recall.mode).toBe('lexical');
    expect((await recall.recall('cat'))[0]?.text).toContain('Luna');
    const tool = kit.createRecallTool(recall);
    expect(tool.definition).toEqual(real.createRecallTool(recall).definition);
    expect(await tool.handler({ query: 'cat' })).toContain('Luna');
  });

  it("offers Anthropic's memory tool and reads the folder with it", async () => {
    await writeFile(path.join(memoryDir, 'notes.md'), 'hello\n');
    const tool = kit.createAnthropicMemoryTool({ memoryDir });
    expect(tool.definition).toEqual(real.createAnthropicMemoryTool({ memoryDir }).definition);
    expect(await tool.handler({ command: 'view', path: '/memories' })).toContain('notes.md');
  });

  it('reads the passages of recorded sessions and loads the memory context', async () => {
    await writeUserSession(sessionsDir, 's1', ['I adopted a cat called Luna.']);
    const passages = kit.createSessionPassages({ sessionsDir, format: 'native', maxBytes: 1_000_000 });
    expect((await passages()).get('s1')).toEqual(['I adopted a cat called Luna.']);
    await writeFile(path.join(memoryDir, 'MEMORY.md'), '- [Cat](user.md#cat) — Luna\n');
    expect(await kit.loadMemoryContext(memoryDir)).toContain('Luna');
  });

  it('records a session and reads the config', async () => {
    const recorder = await kit.createSessionRecorder({ sessionsDir, id: 'kit-session' });
    await recorder.append({ role: 'user', content: 'hello' });
    await recorder.end();
    expect(recorder.file).toBe(path.join(sessionsDir, 'kit-session.json'));
    const config = await kit.loadConfig({ cwd: folder.path, env: {} });
    expect((await kit.findSpace(config, undefined)).id).toBe(config.spaces[0]!.id);
  });
});
