/**
 * The set-up the test files share, in one place (in the style of graphile-worker's `withPgClient`): a fake
 * Anthropic server per test, a workspace of the example transcripts, and the CLI pointed at the fake.
 */
import { cpSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import {
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type FakeAnthropicServerOptions,
} from '../../harness/fake-anthropic-server.js';
import { startRedis, type TestRedis } from '../../harness/redis.js';
import { scriptedExtractor, type ScriptedFact } from '../../harness/scripted-extractor.js';
import { runCliCaptured, type CliRun } from './cli.js';
import { EXAMPLE_SESSIONS_DIR } from './space.js';
import { tempDirRemovedAfterTest } from './temp-dir.js';

export { createTempDir, tempDirRemovedAfterTest, useTempDir } from './temp-dir.js';

/** What `useFakeAnthropic` gives: the server of the running test. */
export interface FakeAnthropicFixture {
  /** The server of the test now running (a new one for each test). */
  readonly server: FakeAnthropicServer;
  /** Its base URL. */
  readonly url: string;
  /** Closes this test's server and starts another with `options` (its old URL then answers nothing). */
  restart(options?: FakeAnthropicServerOptions): Promise<FakeAnthropicServer>;
}

/**
 * A fake Anthropic server started before each test of the file (or once for the file) and closed after it.
 * `facts`: its default answer is the scripted extractor over them; `answer`: another default; neither: nothing
 * is scripted, each test says what it answers. Register it before the file's own hooks that use it.
 */
export function useFakeAnthropic(
  options: FakeAnthropicServerOptions & {
    readonly facts?: readonly ScriptedFact[];
    /** Its default answer, when not the scripted extractor over `facts`. */
    readonly answer?: Parameters<FakeAnthropicServer['setDefault']>[0];
    /** `each` (default): a server per test; `all`: one server for the whole file (before/afterAll). */
    readonly scope?: 'each' | 'all';
  } = {},
): FakeAnthropicFixture {
  let current: FakeAnthropicServer | undefined;
  const start = async (serverOptions: FakeAnthropicServerOptions): Promise<FakeAnthropicServer> => {
    current = await startFakeAnthropicServer(serverOptions);
    if (options.facts !== undefined) current.setDefault(scriptedExtractor(options.facts));
    if (options.answer !== undefined) current.setDefault(options.answer);
    return current;
  };
  const all = options.scope === 'all';
  (all ? beforeAll : beforeEach)(async () => {
    await start(options);
  });
  (all ? afterAll : afterEach)(async () => {
    await current?.close();
    current = undefined;
  });
  const server = (): FakeAnthropicServer => {
    if (current === undefined) throw new Error('the fake Anthropic server runs only inside a test');
    return current;
  };
  return {
    get server() {
      return server();
    },
    get url() {
      return server().url;
    },
    async restart(serverOptions = options) {
      await server().close();
      return start(serverOptions);
    },
  };
}

/** Runs `use` with a fake Anthropic server and closes it after, whatever happens. */
export async function withFakeAnthropic<T>(
  use: (server: FakeAnthropicServer) => Promise<T>,
  options: FakeAnthropicServerOptions = {},
): Promise<T> {
  const server = await startFakeAnthropicServer(options);
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}

/** The environment that points the CLI at a fake model: its URL, a key, no retries. */
export function modelEnv(url: string): Record<string, string> {
  return {
    DREAMD_MODEL_BASE_URL: url,
    ANTHROPIC_API_KEY: 'sk-ant-test-key',
    DREAMD_MODEL_MAX_RETRIES: '0',
  };
}

/** The CLI run in `root` against the model at `url`, with `env` over `modelEnv`. */
export function cliAt(
  root: string,
  url: string,
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  return runCliCaptured(argv, { cwd: root, env: { ...modelEnv(url), ...env } });
}

/**
 * A temp folder `dreamd-<prefix>-…` whose `sessions/` holds the repository's example transcripts: all of them, or
 * those whose file name ends with one of `names` (with or without `.json`). Removed when the running test
 * finishes (`tempDirRemovedAfterTest`): call it inside a test.
 */
export function exampleWorkspace(names?: readonly string[], prefix = 'test'): string {
  const root = tempDirRemovedAfterTest(prefix);
  copyExampleSessions(root, names);
  return root;
}

/** Copies example transcripts (all, or those `names` end) into `root/sessions`. */
export function copyExampleSessions(root: string, names?: readonly string[]): void {
  cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), {
    recursive: true,
    filter: (source) =>
      names === undefined ||
      !source.endsWith('.json') ||
      names.some((name) => source.endsWith(name.endsWith('.json') ? name : `${name}.json`)),
  });
}

/**
 * A real `redis-server` on a free port for the whole file, stopped after it. Reads as the server itself
 * (`redis.url`, `redis.kill()`, `redis.restart()`), whichever process it is now.
 */
export function useRedis(): TestRedis {
  let current: TestRedis | undefined;
  beforeAll(async () => {
    current = await startRedis();
  });
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  const redis = (): TestRedis => {
    if (current === undefined)
      throw new Error('the test redis-server runs only inside the tests of its file');
    return current;
  };
  return {
    get url() {
      return redis().url;
    },
    get port() {
      return redis().port;
    },
    get dir() {
      return redis().dir;
    },
    get running() {
      return redis().running;
    },
    stop: () => redis().stop(),
    kill: () => redis().kill(),
    restart: () => redis().restart(),
  };
}

/** Creates the folder `names` (joined) under `parent`, with any folder missing on the way; returns its path. */
export async function makeFolder(parent: string, ...names: string[]): Promise<string> {
  const path = join(parent, ...names);
  await mkdir(path, { recursive: true });
  return path;
}
