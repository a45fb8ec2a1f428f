import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The README's "Give your agent memory" example, as plain JavaScript (the `!` dropped). */
const README_EXAMPLE = `
import { createMemoryAgent, loadConfig } from 'dreamd';

const config = loadConfig(); // dreamd.config.json / environment, as the daemon reads it
const agent = await createMemoryAgent({ space: config.spaces[0], config });
const { text } = await agent.chat("Remember that I don't eat spicy food");
console.log(text);
await agent.end(); // the session file gets endedAt; dreamd consolidates it later
`;

let server: FakeAnthropicServer;
let packed: { filename: string; files: { path: string }[] };
let project: string;

beforeAll(async () => {
  server = await startFakeAnthropicServer();
  const destination = mkdtempSync(join(tmpdir(), 'dreamd-pack-'));
  // prepack builds dist/ first.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  packed = (JSON.parse(stdout.slice(stdout.indexOf('['))) as (typeof packed)[])[0]!;
  project = mkdtempSync(join(tmpdir(), 'dreamd-install-'));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-dreamd', private: true, type: 'module' }),
  );
  // --prefer-offline: the dependencies come from npm's cache, filled by the checkout's own `npm ci`.
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(destination, packed.filename)],
    { cwd: project, maxBuffer: 64 * 1024 * 1024 },
  );
});

afterAll(async () => {
  await server?.close();
});

describe('the packed tarball', () => {
  it('ships the compiled code and the CLI, not the tests, benchmarks, sources or sessions', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toContain('dist/src/index.js');
    expect(paths).toContain('dist/src/index.d.ts');
    expect(paths).toContain('dist/src/cli/main.js');
    expect(paths).toContain('bin/dreamd.js');
    expect(paths).toContain('package.json');
    const unwanted = paths.filter(
      (path) => /^(src|test|bench|sessions|memory)\//.test(path) || path.endsWith('.map'),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs without tsx and runs the README library example against the model', async () => {
    const installed = readdirSync(join(project, 'node_modules'));
    expect(installed).toContain('dreamd');
    expect(installed).not.toContain('tsx');
    server.enqueue({ text: 'Noted: no spicy food.' });
    writeFileSync(join(project, 'example.mjs'), README_EXAMPLE);

    const { stdout } = await run('node', ['example.mjs'], {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        HOME: project,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: server.url,
      },
    });

    expect(stdout.trim()).toBe('Noted: no spicy food.');
    expect(server.requests[0]?.prompt).toContain("I don't eat spicy food");
    const sessions = readdirSync(join(project, 'sessions'));
    expect(sessions).toHaveLength(1);
    const session = JSON.parse(readFileSync(join(project, 'sessions', sessions[0]!), 'utf8')) as {
      endedAt?: string;
    };
    expect(session.endedAt).toBeDefined();
  });

  it('installs the dreamd command, which runs on plain Node', async () => {
    const { stdout } = await run(join(project, 'node_modules', '.bin', 'dreamd'), ['--version'], {
      cwd: project,
    });
    expect(stdout.trim()).toBe(VERSION);
  });
});
