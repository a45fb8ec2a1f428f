import { writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, resolvePath } from '../../src/config/load.js';
import { findSpace } from '../../src/discovery/index.js';
import { ConfigError } from '../../src/errors.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

function tempDir(): string {
  return tempDirRemovedAfterTest('config');
}

function writeConfig(dir: string, body: unknown): string {
  const path = join(dir, 'dreamd.config.json');
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

describe('loadConfig', () => {
  it('gives the default space ./sessions → ./memory when there is no config file', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    expect(config.source).toBeUndefined();
    expect(config.spaces).toEqual([
      { id: 'default', sessionsDir: join(cwd, 'sessions'), memoryDir: join(cwd, 'memory'), format: 'native' },
    ]);
    expect(config.gates).toEqual({ minHours: 24, minSessions: 5, quietMinutes: 30 });
    expect(config.schedule).toBe('*/10 * * * *');
    expect(config.model.name).toBe('claude-haiku-5-5');
    expect(config.server).toEqual({ host: '127.0.0.1', port: 7077 });
  });

  it('reads ./dreamd.config.json, expands ~ and resolves relative paths against the file', () => {
    const dir = tempDir();
    writeConfig(dir, {
      spaces: [
        { id: 'shop', sessions: 'shop/sessions', memory: 'shop/memory' },
        {
          id: 'repo',
          sessions: '~/.claude/projects/x',
          memory: '~/.claude/projects/x/memory',
          format: 'claude-code',
        },
      ],
      gates: { minSessions: 3 },
    });
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.spaces[0]).toMatchObject({ sessionsDir: join(dir, 'shop/sessions') });
    expect(config.spaces[1]).toMatchObject({
      memoryDir: join(homedir(), '.claude/projects/x/memory'),
      format: 'claude-code',
    });
    expect(config.gates.minSessions).toBe(3);
    expect(config.gates.minHours).toBe(24);
  });

  it('lets environment variables override the file', () => {
    const dir = tempDir();
    const path = writeConfig(dir, { schedule: '0 * * * *' });
    const config = loadConfig({
      env: {
        DREAMD_CONFIG: path,
        DREAMD_SCHEDULE: '*/5 * * * *',
        DREAMD_MIN_SESSIONS: '7',
        REDIS_URL: 'redis://h:1',
      },
      cwd: tempDir(),
    });
    expect(config.schedule).toBe('*/5 * * * *');
    expect(config.gates.minSessions).toBe(7);
    expect(config.redisUrl).toBe('redis://h:1');
  });

  it('caps model calls on one key at 4 by default; DREAMD_MODEL_CONCURRENCY or model.concurrency change it', () => {
    expect(loadConfig({ env: {}, cwd: tempDir() }).model.concurrency).toBe(4);
    expect(loadConfig({ env: { DREAMD_MODEL_CONCURRENCY: '1' }, cwd: tempDir() }).model.concurrency).toBe(1);
    const dir = tempDir();
    const path = writeConfig(dir, { model: { concurrency: 8 } });
    expect(loadConfig({ env: { DREAMD_CONFIG: path }, cwd: dir }).model.concurrency).toBe(8);
    expect(() => loadConfig({ env: { DREAMD_MODEL_CONCURRENCY: '0' }, cwd: tempDir() })).toThrow(
      /model\.concurrency/,
    );
  });

  it('takes the Anthropic key from ANTHROPIC_API_KEY', () => {
    const config = loadConfig({ env: { ANTHROPIC_API_KEY: 'sk-ant-test' }, cwd: tempDir() });
    expect(config.model.apiKey).toBe('sk-ant-test');
  });

  it('names the field of an invalid config and exits 2', () => {
    const dir = tempDir();
    writeConfig(dir, { gates: { minSessions: 'five' } });
    try {
      loadConfig({ env: {}, cwd: dir });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).field).toBe('gates.minSessions');
      expect((error as ConfigError).message).toContain('gates.minSessions');
      expect((error as ConfigError).exitCode).toBe(2);
    }
  });

  it('rejects unknown fields, bad JSON and a missing explicit file', () => {
    const dir = tempDir();
    writeConfig(dir, { spacez: [] });
    expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(/spacez/);
    writeConfig(dir, '{ not json');
    expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ path: join(dir, 'nope.json'), env: {}, cwd: dir })).toThrow(/does not exist/);
  });

  it('names the line and column of a JSON syntax error', () => {
    const dir = tempDir();
    writeConfig(dir, '{\n  "model": {\n    "name" "claude-haiku-5-5"\n  }\n}\n');
    expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(
      /dreamd\.config\.json line 3 column 12 is not valid JSON/,
    );
    writeConfig(dir, '{\n  "model": {\n');
    expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(/line 3 column 1 is not valid JSON/);
  });

  it('rejects a model or embeddings URL that is not http(s) with a host, from the file or the environment', () => {
    const dir = tempDir();
    for (const baseUrl of ['htp:/oops', 'http:/oops', 'ftp://models.example', 'oops']) {
      writeConfig(dir, { model: { baseUrl } });
      expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(
        /model\.baseUrl: an http:\/\/ or https:\/\/ URL/,
      );
      writeConfig(dir, { embeddings: { baseUrl, model: 'nomic-embed-text' } });
      expect(() => loadConfig({ env: {}, cwd: dir })).toThrow(/embeddings\.baseUrl/);
    }
    expect(() => loadConfig({ env: { DREAMD_MODEL_BASE_URL: 'htp:/oops' }, cwd: tempDir() })).toThrow(
      /DREAMD_MODEL_BASE_URL=htp:\/oops: model\.baseUrl/,
    );
    expect(() => loadConfig({ env: { ANTHROPIC_BASE_URL: 'htp:/oops' }, cwd: tempDir() })).toThrow(
      /ANTHROPIC_BASE_URL=htp:\/oops is not a URL/,
    );
    writeConfig(dir, { model: { baseUrl: 'http://127.0.0.1:11434/v1' } });
    expect(loadConfig({ env: {}, cwd: dir }).model.baseUrl).toBe('http://127.0.0.1:11434/v1');
  });

  /** Loads the config of a fresh folder whose dreamd.config.json lists these spaces, when called. */
  const withSpaces = (spaces: readonly { id: string; sessions: string; memory: string }[]) => {
    const dir = tempDir();
    writeConfig(dir, { spaces });
    return () => loadConfig({ env: {}, cwd: dir });
  };

  it.each([
    [
      'duplicate space ids',
      [
        { id: 'a', sessions: 's1', memory: 'm' },
        { id: 'a', sessions: 's2', memory: 'm2' },
      ],
      /spaces\.1\.id/,
    ],
    [
      'two spaces on one memory directory',
      [
        { id: 'a', sessions: 's1', memory: 'm' },
        { id: 'b', sessions: 's2', memory: 'm' },
      ],
      /share the memory directory/,
    ],
    [
      'two spaces on one sessions directory',
      [
        { id: 'a', sessions: 's', memory: 'm1' },
        { id: 'b', sessions: 's', memory: 'm2' },
      ],
      /"a" and "b" read the same sessions directory/,
    ],
    [
      'memory in the sessions directory itself',
      [{ id: 'a', sessions: 'same', memory: 'same' }],
      /same directory for sessions and memory/,
    ],
  ])('refuses %s', (_what, spaces, error) => {
    expect(withSpaces(spaces)).toThrow(error);
  });

  it("keeps Claude Code's own layout valid: memory inside the project folder", () => {
    expect(withSpaces([{ id: 'a', sessions: 'project', memory: 'project/memory' }])().spaces[0]!.id).toBe(
      'a',
    );
  });

  it('requires an API token when the server is not bound to loopback', () => {
    expect(() => loadConfig({ env: { DREAMD_HOST: '0.0.0.0' }, cwd: tempDir() })).toThrow(/DREAMD_API_TOKEN/);
    const config = loadConfig({
      env: { DREAMD_HOST: '0.0.0.0', DREAMD_API_TOKEN: 'x'.repeat(20) },
      cwd: tempDir(),
    });
    expect(config.server.apiToken).toHaveLength(20);
  });

  it('requires a base URL for an OpenAI-compatible model', () => {
    expect(() => loadConfig({ env: { DREAMD_MODEL_PROVIDER: 'openai-compatible' }, cwd: tempDir() })).toThrow(
      /model\.baseUrl/,
    );
  });

  it('takes the base URL from ANTHROPIC_BASE_URL when nothing else sets model.baseUrl', () => {
    const config = loadConfig({
      env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000/anthropic' },
      cwd: tempDir(),
    });
    expect(config.model.baseUrl).toBe('http://127.0.0.1:4000/anthropic');
  });

  it('lets model.baseUrl in the file and DREAMD_MODEL_BASE_URL win over ANTHROPIC_BASE_URL', () => {
    const dir = tempDir();
    writeConfig(dir, { model: { baseUrl: 'http://127.0.0.1:5000' } });
    const fromFile = loadConfig({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000' }, cwd: dir });
    expect(fromFile.model.baseUrl).toBe('http://127.0.0.1:5000');
    const fromVariable = loadConfig({
      env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000', DREAMD_MODEL_BASE_URL: 'http://127.0.0.1:6000' },
      cwd: tempDir(),
    });
    expect(fromVariable.model.baseUrl).toBe('http://127.0.0.1:6000');
  });

  it('accepts OPENAI_BASE_URL as the endpoint of an OpenAI-compatible model, and ignores it for Anthropic', () => {
    const env = { DREAMD_MODEL_PROVIDER: 'openai-compatible', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' };
    expect(loadConfig({ env, cwd: tempDir() }).model.baseUrl).toBe('http://127.0.0.1:11434/v1');
    expect(
      loadConfig({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, cwd: tempDir() }).model.baseUrl,
    ).toBeUndefined();
  });

  it('names ANTHROPIC_BASE_URL when it is not a URL', () => {
    expect(() => loadConfig({ env: { ANTHROPIC_BASE_URL: 'not a url' }, cwd: tempDir() })).toThrow(
      /ANTHROPIC_BASE_URL=not a url is not a URL/,
    );
  });

  it('rejects a non-numeric number from the environment, naming the variable', () => {
    expect(() => loadConfig({ env: { DREAMD_PORT: 'abc' }, cwd: tempDir() })).toThrow(/DREAMD_PORT/);
  });

  it('names the environment variable, not the config file, for a value the environment set', () => {
    const dir = tempDir();
    const path = writeConfig(dir, { server: { port: 7077 } });
    const load = (env: Record<string, string>) => () => loadConfig({ path, env, cwd: dir });
    expect(load({ DREAMD_PORT: '70000' })).toThrow(/^DREAMD_PORT=70000: server\.port: /);
    expect(load({ DREAMD_HOST: '0.0.0.0' })).toThrow(
      /^DREAMD_HOST=0\.0\.0\.0: server\.host 0\.0\.0\.0 is not loopback/,
    );
    // A field the file set is still named by the file, with its line and column.
    const bad = writeConfig(tempDir(), { server: { port: 70000 } });
    expect(() => loadConfig({ path: bad, env: {}, cwd: dir })).toThrow(
      /dreamd\.config\.json line 1 column \d+: server\.port: /,
    );
  });
});

describe('findSpace', () => {
  it('finds a space by id and lists the others when it is unknown', async () => {
    const dir = tempDir();
    writeConfig(dir, {
      spaces: [
        { id: 'a', sessions: 's1', memory: 'm1' },
        { id: 'b', sessions: 's2', memory: 'm2' },
      ],
    });
    const config = loadConfig({ env: {}, cwd: dir });
    expect((await findSpace(config, 'b', { cwd: dir })).id).toBe('b');
    await expect(findSpace(config, 'c', { cwd: dir })).rejects.toThrow(
      'no space "c"; configured spaces: a, b; discovery is off',
    );
    await expect(findSpace(config, undefined, { cwd: dir })).rejects.toThrow(
      /several spaces \(a, b\); name a space/,
    );
  });
});

describe('resolvePath', () => {
  it('expands ~ and keeps absolute paths', () => {
    expect(resolvePath('~/x', '/base')).toBe(join(homedir(), 'x'));
    expect(resolvePath('/abs/y', '/base')).toBe('/abs/y');
    expect(resolvePath('rel', '/base')).toBe('/base/rel');
  });
});
