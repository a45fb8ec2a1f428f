import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { findSpace } from '../../src/discovery/index.js';
import { ConfigError } from '../../src/errors.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/** Spaces of several transcript sources, and `discover`, as the config file says them. */

function configIn(content: unknown, env: Record<string, string> = {}) {
  const root = realpathSync(tempDirRemovedAfterTest('sources-config'));
  writeFileSync(join(root, 'dreamd.config.json'), JSON.stringify(content));
  return { root, load: () => loadConfig({ cwd: root, env }) };
}

describe('a space of several sources', () => {
  it("resolves each source, the first also naming the space's sessions folder and format", () => {
    const { root, load } = configIn({
      spaces: [
        {
          id: 'shop',
          memory: './memory',
          sources: [
            { format: 'claude-code', path: './cc' },
            { format: 'codex', path: './codex', cwd: './code/shop' },
          ],
        },
      ],
    });
    const [space] = load().spaces;
    expect(space).toMatchObject({
      sessionsDir: join(root, 'cc'),
      format: 'claude-code',
      sources: [
        { format: 'claude-code', sessionsDir: join(root, 'cc') },
        { format: 'codex', sessionsDir: join(root, 'codex'), repository: join(root, 'code', 'shop') },
      ],
    });
  });

  it('lets two spaces share a folder of many repositories when each takes its own repository, and no more', () => {
    const shared = (cwd?: string) => ({
      format: 'codex',
      path: './codex',
      ...(cwd === undefined ? {} : { cwd }),
    });
    const { load } = configIn({
      spaces: [
        { id: 'shop', memory: './m1', sources: [shared('./shop')] },
        { id: 'blog', memory: './m2', sources: [shared('./blog')] },
      ],
    });
    expect(load().spaces).toHaveLength(2);
    const clash = configIn({
      spaces: [
        { id: 'shop', memory: './m1', sources: [shared('./shop')] },
        { id: 'all', memory: './m2', sources: [shared('./shop')] },
      ],
    });
    expect(clash.load).toThrow(/read the same sessions directory .*"cwd" in each source/);
  });

  it('refuses a space with both sessions and sources, or neither, naming the field', () => {
    const both = configIn({
      spaces: [{ id: 'a', memory: './m', sessions: './s', sources: [{ format: 'native', path: './s' }] }],
    });
    expect(both.load).toThrow(ConfigError);
    expect(both.load).toThrow(/spaces\.0 has both "sessions" and "sources"/);
    const neither = configIn({ spaces: [{ id: 'a', memory: './m' }] });
    expect(neither.load).toThrow(/spaces\.0 has neither "sessions" nor "sources"/);
  });
});

describe('discover in the config', () => {
  it('finds the homes as the agents do: CLAUDE_CONFIG_DIR and CODEX_HOME, else ~/.claude and ~/.codex', () => {
    const { root, load } = configIn({ discover: ['claude-code', 'codex'] });
    const defaults = load();
    expect(defaults.spaces).toEqual([]);
    expect(defaults.discover).toMatchObject({ agents: ['claude-code', 'codex'], agentsMd: false });
    expect(defaults.discover?.claudeHome.endsWith('/.claude')).toBe(true);
    expect(defaults.discover?.codexHome.endsWith('/.codex')).toBe(true);
    mkdirSync(join(root, 'real-codex'));
    symlinkSync(join(root, 'real-codex'), join(root, 'codex-link'));
    const set = loadConfig({
      cwd: root,
      env: { CLAUDE_CONFIG_DIR: join(root, 'claude'), CODEX_HOME: join(root, 'codex-link') },
    });
    // Codex canonicalises its home; Claude Code takes the variable as it is.
    expect(set.discover).toMatchObject({
      claudeHome: join(root, 'claude'),
      codexHome: join(root, 'real-codex'),
    });
  });

  it('takes the options form, with the AGENTS.md block asked for', () => {
    const { load } = configIn({ discover: { agents: ['codex'], agentsMd: true } });
    expect(load().discover).toMatchObject({ agents: ['codex'], agentsMd: true });
    const bad = configIn({ discover: ['cursor'] });
    expect(bad.load).toThrow(/discover/);
  });

  it('says a command without a space that discovery found none, rather than listing none', async () => {
    const { root, load } = configIn(
      { discover: ['codex'] },
      { CODEX_HOME: tempDirRemovedAfterTest('empty-codex') },
    );
    await expect(findSpace(load(), undefined, { cwd: root })).rejects.toThrow(
      /discovery found no repository yet/,
    );
  });
});
