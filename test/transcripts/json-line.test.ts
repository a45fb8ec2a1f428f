import { describe, expect, it } from 'vitest';
import { readJsonLine } from '../../src/transcripts/parse-json-text.js';

describe('readJsonLine', () => {
  it('tells a blank line, an object, JSON that is no object and text that is no JSON apart', () => {
    expect(readJsonLine('   ', 1)).toEqual({ kind: 'blank' });
    expect(readJsonLine('{"type":"user","n":1}', 2)).toEqual({
      kind: 'object',
      record: { type: 'user', n: 1 },
    });
    expect(readJsonLine('[1,2]', 3)).toEqual({
      kind: 'skip',
      warning: 'line 3: not a JSON object, skipped',
      invalid: false,
    });
    const broken = readJsonLine('{"type": ', 4);
    expect(broken).toMatchObject({ kind: 'skip', invalid: true });
    expect(broken.kind === 'skip' && broken.warning).toMatch(/^line 4: invalid JSON \(.+\), skipped$/);
  });
});
