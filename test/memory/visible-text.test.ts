import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INVISIBLE_CONTROLS,
  escapeInvisibleControls,
  stripInvisibleControls,
  writableText,
} from '../../src/memory/visible-text.js';

const HIDDEN_ANYWHERE = new RegExp(INVISIBLE_CONTROLS.source, 'u');

describe('visible text', () => {
  it('strips every hidden and bidi character from text and keeps the rest', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const stripped = stripInvisibleControls(text);
        expect(HIDDEN_ANYWHERE.test(stripped)).toBe(false);
        expect(stripped).toBe([...text].filter((char) => !HIDDEN_ANYWHERE.test(char)).join(''));
      }),
    );
  });

  it('escapes them in JSON, which parses back to the same strings', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 2 }), fc.string({ unit: 'binary' }), (value, text) => {
        const json = escapeInvisibleControls(JSON.stringify({ value, text }, null, 2));
        expect(HIDDEN_ANYWHERE.test(json)).toBe(false);
        expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify({ value, text })));
      }),
    );
  });

  it('strips Markdown, escapes JSON and keeps a removal', () => {
    expect(writableText('user.md', 'a\u202Eb\u200Bc')).toBe('abc');
    expect(writableText('.dreamd/ledger.json', '{"a":"x\u202Ey"}')).toBe('{"a":"x\\u202ey"}');
    expect(writableText('user.md', null)).toBeNull();
  });
});
