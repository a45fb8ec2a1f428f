import { describe, expect, it } from 'vitest';
import { locateSessionFile } from '../../src/transcripts/index.js';

describe('where a file of a space is read from', () => {
  it('is relative to the one folder of a space without sources', () => {
    expect(locateSessionFile({ sessionsDir: '/s', format: 'native' }, 'a.json')).toEqual({
      format: 'native',
      sessionsDir: '/s',
      path: '/s/a.json',
    });
  });

  it('is the deepest source holding the absolute path in a space of several, with its format', () => {
    const space = {
      sessionsDir: '/h/.claude/projects/-code-shop',
      format: 'claude-code' as const,
      sources: [
        { format: 'claude-code' as const, sessionsDir: '/h/.claude/projects/-code-shop' },
        { format: 'codex' as const, sessionsDir: '/h/.codex/sessions' },
        { format: 'native' as const, sessionsDir: '/h/.codex/sessions/2025/imported' },
      ],
    };
    expect(locateSessionFile(space, '/h/.codex/sessions/2025/01/01/rollout-a.jsonl')).toEqual({
      format: 'codex',
      sessionsDir: '/h/.codex/sessions',
      path: '/h/.codex/sessions/2025/01/01/rollout-a.jsonl',
    });
    expect(locateSessionFile(space, '/h/.codex/sessions/2025/imported/x.json')?.format).toBe('native');
    expect(locateSessionFile(space, '/h/.claude/projects/-code-shop/s.jsonl')?.format).toBe('claude-code');
  });

  it('is nowhere for a file no source holds any longer', () => {
    const space = {
      sessionsDir: '/a',
      format: 'codex' as const,
      sources: [{ format: 'codex' as const, sessionsDir: '/a' }],
    };
    expect(locateSessionFile(space, '/b/rollout.jsonl')).toBeUndefined();
  });
});
