/**
 * Child of kit-loading.test.ts: imports the agent kit, then (with a base URL) has a memory agent on an
 * OpenAI-compatible endpoint answer one message. Prints the modules loaded after each step as JSON. Run with
 * `--import tsx --import <module-log registration>`; the registration collects resolved URLs in
 * globalThis.__loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const loaded = (): string[] => [...((globalThis as { __loaded?: Set<string> }).__loaded ?? [])];

const kit = await import('../../../src/agent-kit.js');
const afterImport = loaded();
const baseUrl = process.argv[2];
let afterChat: string[] = [];
if (baseUrl !== undefined) {
  const base = mkdtempSync(join(tmpdir(), 'dreamd-kit-loads-'));
  const space = {
    id: 'kit',
    sessionsDir: join(base, 'sessions'),
    memoryDir: join(base, 'memory'),
    format: 'native' as const,
  };
  const config = await kit.loadConfig({ cwd: base, env: {} });
  const agent = await kit.createMemoryAgent({
    space,
    config: {
      ...config,
      model: { ...config.model, provider: 'openai-compatible', name: 'qwen3:4b', baseUrl, maxRetries: 0 },
    },
  });
  await agent.chat('hello');
  await agent.end();
  afterChat = loaded();
  // A child process has no test to remove its folder after: it removes it itself.
  rmSync(base, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify({ afterImport, afterChat }));
