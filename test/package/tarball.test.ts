import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { createTempDir } from '../support/fixtures.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The README's "Give your agent memory" example, as plain JavaScript (the `!` dropped). */
const README_EXAMPLE = `
import { createMemoryAgent, loadConfig } from 'dreamd/agent';

const config = await loadConfig(); // dreamd.config.json / environment, as the daemon reads it
const agent = await createMemoryAgent({ space: config.spaces[0], config });
const { text } = await agent.chat("Remember that I don't eat spicy food");
console.log(text);
await agent.end(); // the session file gets endedAt; dreamd consolidates it later
`;

let server: FakeAnthropicServer;
let packed: { filename: string; files: { path: string }[] };
let project: string;
/** What `npm install` of the tarball printed. */
let installed: { stdout: string; stderr: string };
/** The folders beforeAll made (the tarball's, the installing project's), removed after the file. */
const folders: { remove: () => Promise<void> }[] = [];

beforeAll(async () => {
  server = await startFakeAnthropicServer();
  const pack = await createTempDir('pack');
  folders.push(pack);
  const destination = pack.path;
  // prepack builds dist/ first.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  packed = (JSON.parse(stdout.slice(stdout.indexOf('['))) as (typeof packed)[])[0]!;
  const install = await createTempDir('install');
  folders.push(install);
  project = install.path;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-dreamd', private: true, type: 'module' }),
  );
  // --prefer-offline: the dependencies come from npm's cache, filled by the checkout's own `npm ci`.
  installed = await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(destination, packed.filename)],
    { cwd: project, maxBuffer: 64 * 1024 * 1024 },
  );
});

afterAll(async () => {
  await server?.close();
  await Promise.all(folders.splice(0).map((folder) => folder.remove()));
});

describe('the packed tarball', () => {
  it('installs without an engine warning: every dependency runs on the Node versions dreamd declares', () => {
    // The checkout's `overrides` never reach a consumer: the versions it resolves must fit `engines` alone.
    expect(installed.stderr).not.toMatch(/EBADENGINE/);
  });

  it('ships the compiled code and the CLI, not the tests, benchmarks, sources or sessions', () => {
    const paths = packed.files.map((file) => file.path);
    const shipped = [
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/cli/main.js',
      'bin/dreamd.js',
      'package.json',
      'LICENSE',
      'dist/workers/main.js',
      'dist/src/daemon/consolidation-processor.js',
      'dist/src/agent-kit.js',
      // The Claude Code plugin (dreamd mcp, its hooks, /dreamd:dream) and the marketplace file that lists it.
      'plugin/.claude-plugin/plugin.json',
      'plugin/hooks/hooks.json',
      'plugin/commands/dream.md',
      '.claude-plugin/marketplace.json',
    ];
    // Every one of them is in the tarball: a failure lists the ones that are missing.
    expect(shipped.filter((path) => !paths.includes(path))).toEqual([]);
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

  it('lists in package.json only files that ship, and an engines range its dependencies accept', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      files: string[];
      engines: { node: string };
    };
    const paths = packed.files.map((file) => file.path);
    for (const entry of manifest.files.filter((file) => !file.startsWith('!'))) {
      expect(paths.some((path) => path === entry || path.startsWith(`${entry}/`))).toBe(true);
    }
    // The installed tree (dreamd's dependencies, resolved as a user's npm resolves them): none asks for a Node
    // newer than the lowest one dreamd's engines accept, except the two the checkout's overrides pin (see README).
    const lowest = /^>=\s*(\d+)\.(\d+)/.exec(manifest.engines.node);
    expect(lowest).not.toBeNull();
    const lowestMajor = Number(lowest![1]);
    const demanding: string[] = [];
    const walk = (folder: string): void => {
      for (const name of readdirSync(folder)) {
        if (name.startsWith('.')) continue;
        if (name.startsWith('@')) {
          walk(join(folder, name));
          continue;
        }
        const manifestPath = join(folder, name, 'package.json');
        let dependency: { name?: string; version?: string; engines?: { node?: string } };
        try {
          dependency = JSON.parse(readFileSync(manifestPath, 'utf8')) as typeof dependency;
        } catch {
          continue;
        }
        const wanted = /^>=\s*(\d+)/.exec(dependency.engines?.node ?? '');
        if (wanted !== null && Number(wanted[1]) > lowestMajor) {
          demanding.push(`${dependency.name ?? name}@${dependency.version ?? '?'}`);
        }
        try {
          walk(join(folder, name, 'node_modules'));
        } catch {
          // no nested dependencies
        }
      }
    };
    walk(join(project, 'node_modules'));
    expect(demanding.map((entry) => entry.replace(/@[^@]+$/, '')).sort()).toEqual(
      ['content-disposition', 'cookie'].filter((name) => demanding.some((entry) => entry.startsWith(name))),
    );
  });

  it('can be required from CommonJS, the whole package and the agent kit', async () => {
    writeFileSync(
      join(project, 'uses-require.cjs'),
      [
        "const dreamd = require('dreamd');",
        "const agent = require('dreamd/agent');",
        'console.log(typeof dreamd.createDreamd, typeof dreamd.createMemoryTools, typeof agent.createMemoryTools);',
      ].join('\n'),
    );
    const { stdout, stderr } = await run('node', ['uses-require.cjs'], { cwd: project });
    expect(stdout.trim()).toBe('function function function');
    expect(stderr).toBe('');
  });

  it('loads the agent kit without the daemon, Redis, the HTTP server, the scheduler or a model SDK', async () => {
    // A resolve hook lists every package the import reaches.
    writeFileSync(
      join(project, 'list-packages.mjs'),
      [
        'export async function resolve(specifier, context, next) {',
        '  if (!/^[./]|^node:|^file:/.test(specifier)) process.stderr.write(`package ${specifier}\\n`);',
        '  return next(specifier, context);',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./list-packages.mjs', import.meta.url);\n",
    );
    const listed = async (entry: string): Promise<string[]> => {
      const { stderr } = await run(
        'node',
        ['--import', './register.mjs', '--input-type=module', '-e', `await import('${entry}');`],
        { cwd: project },
      );
      return [...stderr.matchAll(/^package (\S+)$/gm)].map((match) => match[1]!);
    };
    const daemonParts = /^(bullmq|ioredis|fastify|@bull-board\/|node-cron|prom-client|pino)/;
    const sdks = /^(@anthropic-ai\/sdk|openai)$/;
    const kit = await listed('dreamd/agent');
    expect(kit).toContain('dreamd/agent');
    expect(kit.filter((name) => daemonParts.test(name) || sdks.test(name))).toEqual([]);
    // The main entry does load the daemon: the check above is not vacuous.
    const whole = await listed('dreamd');
    expect(whole.filter((name) => daemonParts.test(name)).length).toBeGreaterThan(0);
  });

  it('installs the dreamd command, which runs on plain Node', async () => {
    const { stdout } = await run(join(project, 'node_modules', '.bin', 'dreamd'), ['--version'], {
      cwd: project,
    });
    expect(stdout.trim()).toBe(VERSION);
  });
});
