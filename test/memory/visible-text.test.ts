import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INVISIBLE_CONTROLS,
  escapeInvisibleControls,
  stripInvisibleControls,
  stripOwnInvisibleControls,
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

  it("keeps a person's hidden characters where the file held them, and drops those dreamd's text adds", () => {
    const person = '\uFEFF# Notes\nمی\u200Cخواهم 👨\u200D👩\u200D👧 and \u200Fשלום\n';
    const fact = '- Deploy\u202E nightly 👩\u200D💻\n';
    const written = stripOwnInvisibleControls(`${person}${fact}`, [person]);
    expect(written).toBe(`${person}- Deploy nightly 👩💻\n`);
    // A person's line moved elsewhere keeps its characters; copied into dreamd's own line, it does not.
    const moved = '\u200Fשלום and 👨\u200D👩\u200D👧\n';
    expect(stripOwnInvisibleControls(`${moved}- Deploy\n`, [`# Notes\n${moved}`])).toBe(`${moved}- Deploy\n`);
    expect(stripOwnInvisibleControls(`- [x](x.md) — and \u200Fשלום\n`, [person])).toBe(
      '- [x](x.md) — and שלום\n',
    );
    // The same character in a context the file never held is dreamd's.
    expect(stripOwnInvisibleControls('a\u200Fb', [person])).toBe('ab');
    expect(writableText('user.md', `${person}x\u200By`, [null, person])).toBe(`${person}xy`);
  });

  it('keeps every byte of a file it only passes through, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(stripOwnInvisibleControls(text, [text])).toBe(text);
      }),
    );
  });
});
