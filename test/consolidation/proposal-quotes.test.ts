import { describe, expect, it } from 'vitest';
import { quotesOf } from '../../src/consolidation/approval/proposal.js';
import { fact } from '../memory/helpers.js';

const segment = (sessionId: string, lines: string[]) => ({
  sessionId,
  header: `### session ${sessionId} · 2026-11-01`,
  lines: lines.map((text, message) => ({ message, text })),
});

describe('the words a proposed fact rests on', () => {
  it("quotes the line of the fact's own sessions that holds most of its words, the user's first among equals", () => {
    const porto = fact({
      id: 'f-porto00000',
      body: 'Lives in Porto, Rua de Santa Catarina 112.',
      sources: ['s-2'],
    });
    const quotes = quotesOf(
      [porto],
      [
        segment('s-1', ['user: I live in Porto, Rua de Santa Catarina 112, for real.']),
        segment('s-2', [
          'assistant: Shipping to Porto then.',
          'user: I moved to Porto: Rua de Santa Catarina 112.',
          'tool ← Address: Rua de Santa Catarina 112, Porto',
        ]),
      ],
    );
    expect(quotes).toEqual({
      'f-porto00000': { session: 's-2', text: 'I moved to Porto: Rua de Santa Catarina 112.' },
    });
  });

  it('gives none when no line holds its words, and cuts a long line', () => {
    const long = fact({ id: 'f-long000000', body: 'Prefers tea.', sources: ['s'] });
    const none = fact({ id: 'f-none000000', body: 'Speaks Finnish.', sources: ['s'] });
    const quotes = quotesOf([long, none], [segment('s', [`user: I prefer tea ${'and more '.repeat(60)}`])]);
    expect(Object.keys(quotes)).toEqual(['f-long000000']);
    expect(quotes['f-long000000']!.text).toHaveLength(280);
    expect(quotes['f-long000000']!.text.endsWith('…')).toBe(true);
  });
});
