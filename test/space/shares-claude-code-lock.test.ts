import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharesClaudeCodeLock } from '../../src/space/claude-code-hold.js';
import { useTempDir } from '../support/fixtures.js';

describe("who respects Claude Code's .consolidate-lock", () => {
  const dir = useTempDir('shares-lock');
  const memoryDir = (): string => join(dir.path, 'memory');

  it('a discovered space and a space with a Claude Code source do, whatever their first format', async () => {
    expect(
      await sharesClaudeCodeLock({ format: 'codex', memoryDir: memoryDir(), repository: '/code/shop' }),
    ).toBe(true);
    expect(
      await sharesClaudeCodeLock({
        format: 'codex',
        memoryDir: memoryDir(),
        sources: [
          { format: 'codex', sessionsDir: '/c' },
          { format: 'claude-code', sessionsDir: '/p' },
        ],
      }),
    ).toBe(true);
  });

  it('a Codex or native space of its own folder does not, while the folder holds no lock file', async () => {
    expect(await sharesClaudeCodeLock({ format: 'codex', memoryDir: memoryDir() })).toBe(false);
    expect(
      await sharesClaudeCodeLock({
        format: 'native',
        memoryDir: memoryDir(),
        sources: [{ format: 'codex', sessionsDir: '/c' }],
      }),
    ).toBe(false);
  });
});
