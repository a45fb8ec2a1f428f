/**
 * The Claude Code plugin the package ships (`plugin/`, listed by `.claude-plugin/marketplace.json`): its
 * manifest, hooks and command in the formats Claude Code documents for plugins (a manifest in
 * `.claude-plugin/plugin.json`, `mcpServers` in it, `hooks/hooks.json` with the `hooks` wrapper and command
 * hooks, `commands/*.md` with frontmatter and `!` lines), and each hook's command run as Claude Code runs it:
 * through a shell, in the project, with the hook's input on stdin and `dreamd` on the PATH.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMANDS } from '../../src/cli/run-cli.js';
import { entryName } from '../../src/cli/program.js';
import { claudeProjectName } from '../../src/discovery/index.js';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { failOnLeftovers, startDreamdDaemon } from '../daemon/harness.js';
import { makeRepository, placeClaudeSession } from '../discovery/agent-home.js';
import { eventuallyValue } from '../support/eventually.js';
import { modelEnv, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace } from '../support/space.js';
import { FIXTURE } from '../transcripts/helpers.js';
import { BIN } from './client.js';
import { saveRuleTaughtAgain } from './helpers.js';

failOnLeftovers();
const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PLUGIN = join(ROOT, 'plugin');
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8')) as unknown;

/** The hook events Claude Code documents; a hooks file naming any other is ignored by it. */
const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'Notification',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'SessionStart',
  'SessionEnd',
] as const;

const Manifest = z.object({
  name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/u),
  version: z.string(),
  description: z.string().min(1),
  mcpServers: z.record(
    z.string(),
    z.strictObject({
      command: z.string(),
      args: z.array(z.string()),
      env: z.record(z.string(), z.string()).optional(),
    }),
  ),
});
const Hooks = z.strictObject({
  description: z.string().optional(),
  hooks: z.partialRecord(
    z.enum(HOOK_EVENTS),
    z.array(
      z.strictObject({
        matcher: z.string().optional(),
        hooks: z.array(
          z.strictObject({ type: z.literal('command'), command: z.string(), timeout: z.number().optional() }),
        ),
      }),
    ),
  ),
});
const Marketplace = z.object({
  name: z.string(),
  owner: z.object({ name: z.string() }),
  plugins: z.array(z.object({ name: z.string(), source: z.string(), description: z.string().optional() })),
});

/** The command line of each hook of an event. */
function hookCommands(event: (typeof HOOK_EVENTS)[number]): string[] {
  const hooks = Hooks.parse(readJson(join(PLUGIN, 'hooks', 'hooks.json')));
  return (hooks.hooks[event] ?? []).flatMap((entry) => entry.hooks.map((hook) => hook.command));
}

/** A folder holding a `dreamd` that runs this checkout's bin/dreamd.js, as `npm install -g dreamd` puts one on the PATH. */
function dreamdOnPath(): string {
  const folder = tempDirRemovedAfterTest('path');
  writeFileSync(join(folder, 'dreamd'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(folder, 'dreamd'), 0o755);
  return folder;
}

/** Runs a hook's command as Claude Code does: `sh -c`, in the project, its input as JSON on stdin. */
function runHook(
  command: string,
  project: string,
  input: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd: project,
      env: {
        PATH: `${dreamdOnPath()}:${process.env.PATH ?? ''}`,
        HOME: project,
        CLAUDE_PROJECT_DIR: project,
        CLAUDE_PLUGIN_ROOT: PLUGIN,
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify({ session_id: 'abc', cwd: project, ...input }));
  });
}

/** A configured space (`sessions/`, `memory/`) with `sessions` of the examples and a rule taught again 3×. */
async function projectWithRule(
  sessions: readonly string[] = [],
): Promise<{ root: string; memoryDir: string }> {
  const test = createTestSpace({ modelUrl: fake.url, examples: sessions });
  const memoryDir = join(test.root, 'memory');
  mkdirSync(memoryDir, { recursive: true });
  await saveRuleTaughtAgain(memoryDir);
  return { root: test.root, memoryDir };
}

describe('the Claude Code plugin', () => {
  it('has a manifest Claude Code reads, whose MCP server is `dreamd mcp`, listed by the marketplace file', () => {
    const manifest = Manifest.parse(readJson(join(PLUGIN, '.claude-plugin', 'plugin.json')));
    const pkg = readJson(join(ROOT, 'package.json')) as { version: string; files: string[] };
    expect(manifest.name).toBe('dreamd');
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.mcpServers).toEqual({ dreamd: { command: 'dreamd', args: ['mcp'] } });
    expect(COMMANDS.map(entryName)).toContain('mcp');
    const marketplace = Marketplace.parse(readJson(join(ROOT, '.claude-plugin', 'marketplace.json')));
    expect(marketplace.plugins).toHaveLength(1);
    const [entry] = marketplace.plugins;
    expect(entry!.name).toBe(manifest.name);
    expect(existsSync(join(ROOT, entry!.source, '.claude-plugin', 'plugin.json'))).toBe(true);
    // Shipped in the package.
    expect(pkg.files).toEqual(expect.arrayContaining(['plugin', '.claude-plugin']));
  });

  it('has hooks on documented events only, each a dreamd command that exists', () => {
    const hooks = Hooks.parse(readJson(join(PLUGIN, 'hooks', 'hooks.json')));
    expect(Object.keys(hooks.hooks).sort()).toEqual(['SessionEnd', 'SessionStart']);
    expect(hookCommands('SessionStart')).toEqual(['dreamd hook session-start']);
    expect(hookCommands('SessionEnd')).toEqual(['dreamd hook session-end']);
    expect(COMMANDS.map(entryName)).toContain('hook');
  });

  it('has a command file per slash command: frontmatter, allowed tools, one dreamd line', () => {
    const files = readdirSync(join(PLUGIN, 'commands'));
    expect(files).toEqual(['dream.md']);
    const text = readFileSync(join(PLUGIN, 'commands', 'dream.md'), 'utf8');
    const front = /^---\n([\s\S]*?)\n---\n/u.exec(text);
    expect(front).not.toBeNull();
    expect(front![1]).toMatch(/^description: \S.+$/mu);
    expect(front![1]).toMatch(/^allowed-tools: Bash\(dreamd consolidate:\*\)$/mu);
    expect([...text.matchAll(/^!`([^`]+)`$/gmu)].map((match) => match[1])).toEqual([
      'dreamd consolidate . --force',
    ]);
  });

  it('SessionStart prints the rules people keep re-teaching as additionalContext, and nothing when there are none', async () => {
    const [command] = hookCommands('SessionStart');
    const { root } = await projectWithRule();
    const start = await runHook(command!, root, { hook_event_name: 'SessionStart', source: 'startup' });
    expect(start.stderr).toBe('');
    expect(start.code).toBe(0);
    const output = z
      .object({
        hookSpecificOutput: z.object({
          hookEventName: z.literal('SessionStart'),
          additionalContext: z.string(),
        }),
      })
      .parse(JSON.parse(start.stdout));
    expect(output.hookSpecificOutput.additionalContext).toMatch(
      /No semicolons: Do not use semicolons in TypeScript code\. \(taught again 3×, last 2026-11-20\)/,
    );

    const plain = createTestSpace({ modelUrl: fake.url });
    const quiet = await runHook(command!, plain.root, { hook_event_name: 'SessionStart', source: 'startup' });
    expect(quiet).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('SessionEnd does nothing without a daemon: no run, nothing written', async () => {
    const [command] = hookCommands('SessionEnd');
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    const port = await findFreePort();
    const end = await runHook(
      command!,
      test.root,
      { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
      { ...modelEnv(fake.url), DREAMD_PORT: String(port) },
    );
    expect(end.code).toBe(0);
    expect(end.stdout).toBe('');
    expect(end.stderr).toMatch(
      /^dreamd: space default: nothing to do: no daemon answers at http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(existsSync(join(test.root, 'memory', 'MEMORY.md'))).toBe(false);
    expect(fake.server.requests).toHaveLength(0);
  });

  it('SessionEnd asks the daemon that serves the project to check it, and its gates decide (never forced)', async () => {
    const [command] = hookCommands('SessionEnd');
    const port = String(await findFreePort());
    // Two settled sessions: the session gate (five) is closed, so the run the hook asks for skips.
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: ['2026-11-02-lisbon-delivery.json', '2026-11-05-dinner-friday.json'],
      env: { DREAMD_PORT: port },
    });
    const daemon = await startDreamdDaemon(test.config);
    try {
      const end = await runHook(
        command!,
        test.root,
        { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
        { ...modelEnv(fake.url), DREAMD_PORT: port },
      );
      expect(end.code).toBe(0);
      const jobId = /the daemon checks the space now \(job (\S+)\)/.exec(end.stderr)?.[1];
      expect(jobId, end.stderr).toBeDefined();
      const job = await eventuallyValue(
        async () => {
          const view = (await (await fetch(`${daemon.address}/jobs/${jobId!}`)).json()) as {
            state: string;
            summary?: { status: string; reason?: string };
          };
          return view.state === 'completed' ? view : undefined;
        },
        60_000,
        `job ${jobId!} completed`,
      );
      expect(job.summary).toMatchObject({ status: 'skipped' });
      expect(job.summary!.reason).toMatch(/session/);
      expect(fake.server.requests).toHaveLength(0);
      expect(existsSync(join(test.root, 'memory', 'MEMORY.md'))).toBe(false);
    } finally {
      await daemon.stop();
    }
  });

  it("/dreamd:dream's line consolidates the repository Claude Code runs it in", async () => {
    const text = readFileSync(join(PLUGIN, 'commands', 'dream.md'), 'utf8');
    const line = /^!`([^`]+)`$/mu.exec(text)![1]!;
    const root = realpathSync(tempDirRemovedAfterTest('plugin-dream'));
    const claudeHome = join(root, 'home', '.claude');
    const repository = makeRepository(join(root, 'code', 'shop'));
    placeClaudeSession(claudeHome, repository, FIXTURE.helloWorld);
    const config = join(root, 'dreamd.config.json');
    writeFileSync(config, JSON.stringify({ discover: ['claude-code'] }));
    fake.server.setDefault(
      scriptedExtractor([
        {
          trigger: 'Write a shell script called hello.sh',
          type: 'project',
          title: 'Hello script',
          body: 'The repository has a hello.sh that prints Hello world.',
        },
      ]),
    );
    const run = await runHook(
      line,
      repository,
      {},
      {
        ...modelEnv(fake.url),
        DREAMD_CONFIG: config,
        CLAUDE_CONFIG_DIR: claudeHome,
        DREAMD_PORT: String(await findFreePort()),
      },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/space shop-\w+: run run-\S+ completed/);
    const memoryDir = join(claudeHome, 'projects', claudeProjectName(repository), 'memory');
    expect(readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8')).toContain('Hello script');
  });
});
