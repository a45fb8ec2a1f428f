import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

// The agent kit loads what it uses: its import loads no daemon, queue, HTTP server, consolidation code, model
// SDK or schema library; an agent on an OpenAI-compatible endpoint loads the OpenAI SDK and never Anthropic's.

const run = promisify(execFile);
const CHILD = join(import.meta.dirname, 'support', 'kit-loads.ts');

/** A module hook that records every module URL resolved, in globalThis.__loaded of the main thread. */
function moduleLog(): string {
  const folder = tempDirRemovedAfterTest('module-log');
  writeFileSync(
    join(folder, 'hooks.mjs'),
    [
      'let port;',
      'export function initialize(data) { port = data.port; }',
      'export async function resolve(specifier, context, next) {',
      '  const resolved = await next(specifier, context);',
      '  port.postMessage(resolved.url);',
      '  return resolved;',
      '}',
    ].join('\n'),
  );
  writeFileSync(
    join(folder, 'register.mjs'),
    [
      "import { register } from 'node:module';",
      "import { MessageChannel } from 'node:worker_threads';",
      'const loaded = (globalThis.__loaded = new Set());',
      'const { port1, port2 } = new MessageChannel();',
      'port1.on("message", (url) => loaded.add(url));',
      'port1.unref();',
      "register('./hooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });",
    ].join('\n'),
  );
  return join(folder, 'register.mjs');
}

/** Loaded modules of `loaded` whose URL matches `pattern`. */
const matching = (loaded: readonly string[], pattern: RegExp) => loaded.filter((url) => pattern.test(url));

const HEAVY =
  /node_modules\/(?:zod|@anthropic-ai\/sdk|openai|bullmq|ioredis|fastify|chrono-node|yaml|pino)\/|\/src\/(?:daemon|consolidation|cli|space)\//;

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

async function loads(baseUrl?: string): Promise<{ afterImport: string[]; afterChat: string[] }> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--import', moduleLog(), CHILD, ...(baseUrl === undefined ? [] : [baseUrl])],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as { afterImport: string[]; afterChat: string[] };
}

describe('the agent kit', () => {
  it('imports no daemon, queue, server, consolidation, SDK or schema library', async () => {
    const { afterImport } = await loads();
    expect(matching(afterImport, /\/src\/agent-kit\.ts$/)).toHaveLength(1);
    expect(matching(afterImport, HEAVY)).toEqual([]);
  });

  it('loads the SDK of the provider in use only, when the agent first talks to the model', async () => {
    server.enqueue({ text: 'Hello!' });
    const { afterChat } = await loads(server.url);
    expect(server.requests).toHaveLength(1);
    expect(matching(afterChat, /node_modules\/openai\//).length).toBeGreaterThan(0);
    expect(matching(afterChat, /node_modules\/zod\//).length).toBeGreaterThan(0);
    expect(matching(afterChat, /node_modules\/(?:@anthropic-ai\/sdk|bullmq|ioredis|fastify)\//)).toEqual([]);
    expect(matching(afterChat, /\/src\/(?:daemon|consolidation|cli)\//)).toEqual([]);
  });
});
