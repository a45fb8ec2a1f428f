import { describe, expect, it } from 'vitest';
import { MemoryFormatError } from '../../src/errors.js';
import { contentHash } from '../../src/memory/topic-entry.js';
import {
  createEmptyTopic,
  parseTopicFile,
  renderTopicFile,
  topicFacts,
} from '../../src/memory/topic-file.js';
import { isFactId, newFactId } from '../../src/memory/fact-id.js';
import { REALISTIC_USER_MD, fact } from './helpers.js';

function withRealHashes(text: string): string {
  return text
    .replace('HASH1', contentHash("Doesn't eat spicy food", "The user doesn't eat spicy food.\n\n"))
    .replace('HASH2', contentHash('Lives in Berlin', 'Lives in Berlin.\n'));
}

describe('topic files', () => {
  it('makes fact ids of f- and 10 lowercase base32 characters', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newFactId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isFactId(id)).toBe(true);
  });

  it('renders a parsed file back to the same bytes', () => {
    const text = withRealHashes(REALISTIC_USER_MD);
    const topic = parseTopicFile(text, 'user.md', { today: '2026-12-01' });
    expect(renderTopicFile(topic, topicFacts(topic))).toBe(text);
    const crlf = text.replace(/\n/g, '\r\n');
    const crlfTopic = parseTopicFile(crlf, 'user.md', { today: '2026-12-01' });
    expect(renderTopicFile(crlfTopic, topicFacts(crlfTopic))).toBe(crlf);
  });

  it('reads ids, dates, sources, status and hand edits', () => {
    const topic = parseTopicFile(withRealHashes(REALISTIC_USER_MD), 'user.md', { today: '2026-12-01' });
    const facts = topicFacts(topic);
    expect(facts.map((f) => [f.id, f.title, f.status, f.editedByHand])).toEqual([
      ['f-7k2m9q4x1z', "Doesn't eat spicy food", 'active', false],
      ['f-abcdefgh23', 'Coffee order', 'active', true],
      [expect.stringMatching(/^f-[a-z2-7]{10}$/), 'Favourite editor', 'active', true],
      ['f-zzzzzzzzz2', 'Lives in Berlin', 'superseded', false],
    ]);
    expect(facts[1]?.body).toContain('## not a heading inside a fence');
    expect(facts[1]?.sources).toEqual(['s-a', 's-b']);
    expect(facts[2]?.observed).toBe('2026-12-01');
    expect(facts[3]).toMatchObject({
      supersededBy: 'f-yyyyyyyyy2',
      supersededOn: '2026-11-26',
      body: 'Lives in Berlin.',
    });
    // The same file gives the same id to a hand-written entry every time.
    const again = topicFacts(parseTopicFile(withRealHashes(REALISTIC_USER_MD), 'user.md'));
    expect(again[2]?.id).toBe(facts[2]?.id);
  });

  it('keeps a hand-edited entry verbatim when dreamd rewrites the file', () => {
    const text = withRealHashes(REALISTIC_USER_MD);
    const topic = parseTopicFile(text, 'user.md');
    const facts = topicFacts(topic).map((f) =>
      f.id === 'f-abcdefgh23'
        ? { ...f, body: 'Espresso.', sources: [...f.sources, 's-c'], updated: '2026-12-02' }
        : f,
    );
    const added = fact({ id: 'f-newnewnew2', title: 'Runs on Sundays', body: 'The user runs every Sunday.' });
    const out = renderTopicFile(topic, [...facts, added]);
    expect(out).toContain('Flat white with oat milk, extra hot. (I changed this myself.)');
    expect(out).not.toContain('Espresso.');
    expect(out).toContain('"sources":["s-a","s-b","s-c"]');
    expect(out).toContain('## Runs on Sundays\n<a id="f-newnewnew2"></a>');
    // Still recognised as edited by hand after the rewrite.
    const reparsed = topicFacts(parseTopicFile(out, 'user.md'));
    expect(reparsed.find((f) => f.id === 'f-abcdefgh23')?.editedByHand).toBe(true);
    expect(reparsed.find((f) => f.id === 'f-7k2m9q4x1z')?.editedByHand).toBe(false);
    // The new entry sits among the active ones, before the superseded section.
    expect(out.indexOf('## Runs on Sundays')).toBeLessThan(out.indexOf('## Superseded'));
  });

  it('detects an edit of a generated entry by its hash', () => {
    const start = renderTopicFile(createEmptyTopic('feedback'), [
      fact(
        {
          id: 'f-aaaaaaaaa2',
          title: 'Use pnpm',
          body: 'Use pnpm, not npm.',
          why: 'Lockfile.',
          howToApply: 'Run pnpm i.',
        },
        'feedback',
      ),
    ]);
    const parsed = topicFacts(parseTopicFile(start, 'feedback.md'));
    expect(parsed[0]).toMatchObject({ editedByHand: false, why: 'Lockfile.', howToApply: 'Run pnpm i.' });
    const edited = start.replace('Run pnpm i.', 'Run pnpm install --frozen-lockfile.');
    expect(topicFacts(parseTopicFile(edited, 'feedback.md'))[0]?.editedByHand).toBe(true);
  });

  it('moves a superseded fact into the Superseded section and keeps it', () => {
    const topic = createEmptyTopic('user');
    const old = fact({ id: 'f-oldoldold2', title: 'Lives in Berlin', body: 'Lives in Berlin.' });
    const first = renderTopicFile(topic, [old]);
    const parsed = parseTopicFile(first, 'user.md');
    const newer = fact({ id: 'f-newnewnew2', title: 'Lives in Hamburg', body: 'Moved to Hamburg.' });
    const out = renderTopicFile(
      parsed,
      [{ ...old, status: 'superseded', supersededBy: newer.id, supersededOn: '2026-11-26' }, newer],
      {
        locate: (id) => (id === newer.id ? { title: newer.title, fileName: 'user.md' } : undefined),
      },
    );
    expect(out).toContain('### ~~Lives in Berlin~~');
    expect(out).toContain('> Superseded by [Lives in Hamburg](user.md#f-newnewnew2) on 2026-11-26.');
    const facts = topicFacts(parseTopicFile(out, 'user.md'));
    expect(facts.find((f) => f.id === old.id)).toMatchObject({
      status: 'superseded',
      editedByHand: false,
      body: 'Lives in Berlin.',
    });
  });

  it('reports broken frontmatter naming the file and the fix', () => {
    const broken = '---\nname: User\ndescription: [unclosed\ntype: user\n---\n\n## A\ntext\n';
    expect(() => parseTopicFile(broken, 'user.md')).toThrow(MemoryFormatError);
    expect(() => parseTopicFile(broken, 'user.md')).toThrow(
      /user\.md: frontmatter is not valid YAML.*Fix the frontmatter/,
    );
    expect(() => parseTopicFile('---\nname: x\n', 'user.md')).toThrow(/never ends/);
    expect(() => parseTopicFile('---\nname: P\ndescription: d\ntype: project\n---\n', 'user.md')).toThrow(
      /type "project"/,
    );
    expect(() => parseTopicFile('---\nname: P\ntype: user\n---\n', 'user.md')).toThrow(/description/);
  });
});
