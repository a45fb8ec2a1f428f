import { describe, expect, it } from 'vitest';
import type { DiscoverSettings, Space } from '../../src/config/schema.js';
import { discoveredSpaceId, spacesOfDiscovery, type Discovery } from '../../src/discovery/index.js';

const settings: DiscoverSettings = {
  agents: ['claude-code', 'codex'],
  agentsMd: false,
  claudeHome: '/h/.claude',
  codexHome: '/h/.codex',
};

const discovery: Discovery = {
  homes: [],
  claudeProjectFolders: ['-code-shop'],
  notes: [],
  skipped: [],
  repositories: [
    {
      root: '/code/shop',
      kind: 'repository',
      worktrees: [],
      sources: [
        {
          agent: 'claude-code',
          format: 'claude-code',
          sessionsDir: '/h/.claude/projects/-code-shop',
          workingDirectories: ['/code/shop'],
          sessions: 2,
        },
        {
          agent: 'codex',
          format: 'codex',
          sessionsDir: '/h/.codex/sessions',
          workingDirectories: ['/code/shop'],
          files: ['2025/01/01/rollout-a.jsonl'],
          sessions: 1,
        },
      ],
    },
    {
      root: '/tmp/scratch',
      kind: 'folder',
      worktrees: [],
      sources: [
        {
          agent: 'claude-code',
          format: 'claude-code',
          sessionsDir: '/h/.claude/projects/-tmp-scratch',
          workingDirectories: ['/tmp/scratch'],
          sessions: 1,
        },
      ],
    },
  ],
};

describe('the spaces of a discovery', () => {
  it("gives each repository a stable id from its name and root, Claude Code's memory folder and layout", () => {
    expect(discoveredSpaceId('/code/shop')).toMatch(/^shop-[0-9a-f]{8}$/);
    expect(discoveredSpaceId('/code/shop')).toBe(discoveredSpaceId('/code/shop'));
    expect(discoveredSpaceId('/other/shop')).not.toBe(discoveredSpaceId('/code/shop'));
    expect(discoveredSpaceId('/code/.hidden repo')).toMatch(/^hidden-repo-[0-9a-f]{8}$/);
    const [shop] = spacesOfDiscovery(discovery, settings, []).spaces;
    expect(shop?.space).toEqual({
      id: discoveredSpaceId('/code/shop'),
      sessionsDir: '/h/.claude/projects/-code-shop',
      format: 'claude-code',
      sources: [
        { format: 'claude-code', sessionsDir: '/h/.claude/projects/-code-shop' },
        { format: 'codex', sessionsDir: '/h/.codex/sessions', files: ['2025/01/01/rollout-a.jsonl'] },
      ],
      memoryDir: '/h/.claude/projects/-code-shop/memory',
      layout: 'claude-code',
      repository: '/code/shop',
    });
  });

  it("adds the repository's AGENTS.md only when asked, and never for a folder outside git", () => {
    const [shop, scratch] = spacesOfDiscovery(discovery, { ...settings, agentsMd: true }, []).spaces;
    expect(shop?.space?.agentsMd).toBe('/code/shop/AGENTS.md');
    expect(scratch?.space?.agentsMd).toBeUndefined();
  });

  it('leaves a folder a configured space reads to that space, and says so', () => {
    const configured: Space = {
      id: 'codex-all',
      sessionsDir: '/h/.codex/sessions',
      memoryDir: '/m',
      format: 'codex',
    };
    const found = spacesOfDiscovery(discovery, settings, [configured]);
    expect(found.spaces[0]?.space?.sources).toEqual([
      { format: 'claude-code', sessionsDir: '/h/.claude/projects/-code-shop' },
    ]);
    expect(found.notes).toEqual([expect.stringContaining('read by the configured space "codex-all"')]);
  });
});
