import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLength } from '../../src/digest/json-length.js';

describe('jsonLength', () => {
  it('equals the length of JSON.stringify for typical messages', () => {
    const samples: unknown[] = [
      { index: 0, role: 'user', ts: undefined, parts: [{ kind: 'text', text: 'say "hi"\n\tthen\\go →' }] },
      [1, 'two', null, true, undefined, { nested: [{}] }],
      { control: '\u0001\u001f\u007f', emoji: '😀', lone: '\ud800x', empty: '' },
      { date: new Date(0), skip: undefined, fn: () => 1 },
      3.14,
      'plain',
    ];
    for (const sample of samples) expect(jsonLength(sample)).toBe(JSON.stringify(sample).length);
  });

  it('equals the length of JSON.stringify for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonLength(value)).toBe(JSON.stringify(value).length);
      }),
    );
  });

  it('equals the length of JSON.stringify for any string, surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        expect(jsonLength(value)).toBe(JSON.stringify(value).length);
      }),
    );
  });
});
