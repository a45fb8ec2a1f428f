import { describe, expect, it } from 'vitest';
import { bookkeepingLines, factRegion, hunksOf, readableLines } from '../../src/daemon/readable-diff.js';

const TOPIC_FILE =
  '---\nname: User\ndescription: Who the user is.\ntype: user\n---\n\n' +
  '## Home address\n<a id="f-aaaaaaaaaa"></a>\n<!-- dreamd {"observed":"2026-11-02","hash":"1"} -->\nLives in Lisbon.\n\n' +
  '## Coffee\n<a id="f-bbbbbbbbbb"></a>\n<!-- dreamd {"observed":"2026-11-09","hash":"2"} -->\nOat flat white.\n';

const CLAUDE_CODE_FILE =
  '---\nname: Coffee\ndescription: Oat flat white.\nmetadata:\n  type: user\n  modified: 2026-11-09\n' +
  '  id: f-bbbbbbbbbb\n  observed: 2026-11-09\n  sources:\n    - s1\n  hash: 1bf8a8b9d7cd87da\n---\n\nOat flat white.\n';

describe('readable diffs', () => {
  it("marks a file's frontmatter, dreamd's metadata comments and anchors as bookkeeping, and nothing else", () => {
    const lines = TOPIC_FILE.trimEnd().split('\n');
    const kept = bookkeepingLines(lines);
    expect(lines.filter((_line, index) => !kept[index])).toEqual([
      '',
      '## Home address',
      'Lives in Lisbon.',
      '',
      '## Coffee',
      'Oat flat white.',
    ]);
    // A `---` that does not open the file is a Markdown rule, read as text.
    expect(bookkeepingLines(['text', '---', 'more', '---'])).toEqual([false, false, false, false]);
  });

  it("finds a fact's region: its topic entry, its whole Claude Code file, its AGENTS.md line", () => {
    expect(factRegion(TOPIC_FILE, 'f-bbbbbbbbbb')).toBe(
      '## Coffee\n<a id="f-bbbbbbbbbb"></a>\n<!-- dreamd {"observed":"2026-11-09","hash":"2"} -->\nOat flat white.\n',
    );
    expect(factRegion(TOPIC_FILE, 'f-aaaaaaaaaa')).toMatch(/^## Home address\n[\s\S]*Lives in Lisbon\.\n$/);
    expect(factRegion(CLAUDE_CODE_FILE, 'f-bbbbbbbbbb')).toBe(CLAUDE_CODE_FILE);
    expect(factRegion(CLAUDE_CODE_FILE, 'f-aaaaaaaaaa')).toBeNull();
    expect(factRegion(null, 'f-aaaaaaaaaa')).toBeNull();
    const agents = '# Team\n- Use pnpm. <!-- dreamd f-cccccccccc 2026-12-01 -->\n';
    expect(factRegion(agents, 'f-cccccccccc')).toBe('- Use pnpm. <!-- dreamd f-cccccccccc 2026-12-01 -->\n');
  });

  it("splits an AGENTS.md line's trailer from the rule a person reads", () => {
    expect(readableLines(null, '- Use pnpm. <!-- dreamd f-cccccccccc 2026-12-01 -->\n')).toEqual([
      { kind: '+', text: '- Use pnpm.', bookkeeping: false },
      { kind: '+', text: '<!-- dreamd f-cccccccccc 2026-12-01 -->', bookkeeping: true },
    ]);
  });

  it('an update of a Claude Code file shows its body changed and its frontmatter changes as bookkeeping', () => {
    const after = CLAUDE_CODE_FILE.replace(/Oat flat white\.\n$/, 'Oat flat white, extra shot.\n').replace(
      'hash: 1bf8a8b9d7cd87da',
      'hash: 0000000000000000',
    );
    const lines = readableLines(CLAUDE_CODE_FILE, after);
    expect(lines.filter((line) => !line.bookkeeping && line.kind !== ' ')).toEqual([
      { kind: '-', text: 'Oat flat white.', bookkeeping: false },
      { kind: '+', text: 'Oat flat white, extra shot.', bookkeeping: false },
    ]);
    expect(lines.filter((line) => line.bookkeeping && line.kind !== ' ').map((line) => line.text)).toEqual([
      '  hash: 1bf8a8b9d7cd87da',
      '  hash: 0000000000000000',
    ]);
  });

  it('keeps three lines around a change and counts the others', () => {
    const before = Array.from({ length: 20 }, (_value, index) => `line ${index}`).join('\n');
    const after = before.replace('line 10', 'line ten');
    const shown = hunksOf(readableLines(`${before}\n`, `${after}\n`));
    expect(shown[0]).toEqual({ kind: 'skipped', count: 7 });
    expect(shown.at(-1)).toEqual({ kind: 'skipped', count: 6 });
    expect(shown.filter((line) => line.kind !== 'skipped')).toHaveLength(8);
  });
});
