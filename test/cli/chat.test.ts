import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { runCliCaptured } from '../support/cli.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;

let server: FakeAnthropicServer;
beforeEach(async () => {
  server = await startFakeAnthropicServer();
});
afterEach(async () => {
  await server.close();
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dreamd-chat-'));
  mkdirSync(join(dir, 'sessions'));
  return dir;
}

describe('dreamd chat', () => {
  it('remembers a preference in one process and uses it in the next (two real processes)', async () => {
    const cwd = workspace();
    const env = {
      ...process.env,
      DREAMD_MODEL_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      DREAMD_MODEL_MAX_RETRIES: '0',
    };
    server.enqueue(
      {
        toolUse: [
          {
            name: 'write_memory',
            input: {
              path: 'food.md',
              type: 'user',
              title: "Doesn't eat spicy food",
              description: 'food preferences for restaurant suggestions',
              content: "The user doesn't eat spicy food.",
            },
          },
        ],
      },
      { text: 'Noted: no spicy food.' },
    );
    const first = await run(
      process.execPath,
      [BIN, 'chat', "Remember that I don't eat spicy food", '--json'],
      { cwd, env },
    );
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, text: 'Noted: no spicy food.' });
    const toolResult = JSON.stringify(server.requests[1]!.body.messages);
    expect(toolResult).toContain('tool_result');

    server.enqueue({ text: 'Try Prado: mild, seasonal dishes.' });
    const second = await run(process.execPath, [BIN, 'chat', 'Recommend a restaurant for tonight'], {
      cwd,
      env,
    });
    expect(second.stdout.trim()).toBe('Try Prado: mild, seasonal dishes.');
    const system = server.requests[2]!.system;
    expect(system).toContain("Doesn't eat spicy food");
    expect(system).toMatch(/background/i);
    // Both sessions were recorded for consolidation.
    expect(readdirSync(join(cwd, 'sessions')).filter((name) => name.endsWith('.json'))).toHaveLength(2);
  }, 60_000);

  it('says how to get a model when there is no key, with exit code 2', async () => {
    const result = await runCliCaptured(['chat', 'hello'], { cwd: workspace() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
  });
});
