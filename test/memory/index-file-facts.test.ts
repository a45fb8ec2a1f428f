import { describe, expect, it } from 'vitest';
import { indexFileFacts, typeOfHeading } from '../../src/memory/index-file-facts.js';

const context = { modified: '2026-10-01', isReadFile: (file: string) => file === 'notes/food.md' };

describe('facts written as lines of MEMORY.md', () => {
  it('reads paragraph lines and bullets under their heading, with wrapped lines kept with their bullet', () => {
    const text = [
      '# Harbor Notes',
      '',
      '## About me',
      'I work on the night shift.',
      '- Prefers tabs',
      '  over spaces, always',
      '',
      '## Links',
      '* [Runbook](https://example.com/runbook) for outages',
      '',
    ].join('\n');
    const facts = indexFileFacts(text, context);
    expect(facts.map((fact) => [fact.type, fact.title, fact.body, fact.description])).toEqual([
      ['user', 'I work on the night shift.', 'I work on the night shift.', 'MEMORY.md, under "About me"'],
      ['user', 'Prefers tabs', 'Prefers tabs\nover spaces, always', 'MEMORY.md, under "About me"'],
      [
        'reference',
        'Runbook for outages',
        '[Runbook](https://example.com/runbook) for outages',
        'MEMORY.md, under "Links"',
      ],
    ]);
    expect(facts.every((fact) => fact.owner === 'other' && fact.file === 'MEMORY.md')).toBe(true);
    expect(facts.every((fact) => fact.editedByHand && fact.observed === '2026-10-01')).toBe(true);
  });

  it('skips index lines to files read on their own, but keeps a line whose file is not there', () => {
    const facts = indexFileFacts(
      '- [Food](notes/food.md) — no spicy food\n- [Tabs](tabs.md) — I indent with tabs\n',
      context,
    );
    expect(facts.map((fact) => fact.title)).toEqual(['Tabs — I indent with tabs']);
  });

  it('skips headings, comments, code fences, rules, table rules and dreamd notes; a table row is a fact', () => {
    const text = [
      '<!-- a comment',
      'over two lines -->',
      '```sh',
      'make dev',
      '```',
      '---',
      '| a | b |',
      '|---|---|',
      '(3 more user facts in user.md, not listed here)',
      'The one fact.',
    ].join('\n');
    expect(indexFileFacts(text, context).map((fact) => fact.body)).toEqual(['| a | b |', 'The one fact.']);
  });

  it('gives a line the same id when other lines change, and two identical lines two ids', () => {
    const [first] = indexFileFacts('Logs go to /var/tmp.\n', context);
    const later = indexFileFacts(
      '# Notes\nNew line above.\nLogs go to /var/tmp.\nLogs go to /var/tmp.\n',
      context,
    );
    expect(later.find((fact) => fact.body === 'Logs go to /var/tmp.')?.id).toBe(first?.id);
    expect(new Set(later.map((fact) => fact.id)).size).toBe(3);
  });

  it('types a section by its heading, project when the heading says nothing', () => {
    expect(typeOfHeading(['Feedback'])).toBe('feedback');
    expect(typeOfHeading(['Reference links'])).toBe('reference');
    expect(typeOfHeading(['Gotchas'])).toBe('project');
  });
});
