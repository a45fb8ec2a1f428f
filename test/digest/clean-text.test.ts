import { describe, expect, it } from 'vitest';
import { collapseWhitespace, compactSummaryCore } from '../../src/digest/clean-text.js';
import { createRandom } from './generate.js';

describe('compactSummaryCore', () => {
  const summary = [
    'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:',
    'Analysis:',
    'Let me chronologically analyze the conversation: the user asked for X, then I did Y.',
    '',
    'Summary:',
    '1. Primary Request and Intent:',
    '   - Deploy the shop API to eu-west-3 on Fridays only.',
    '2. Files and Code Sections:',
    '   - `src/deploy.ts`: function deploy() { return 1 }',
    '3. All user messages:',
    '   - "never deploy on a Monday"',
    '4. Pending Tasks:',
    '   - finish the script',
    '5. Current Work:',
    '   Editing deploy.ts.',
    '6. Optional Next Step:',
    '   Run the tests.',
    'Please continue the conversation from where we left it off without asking the user any further questions.',
  ].join('\n');

  it('keeps what was said, without the wrapping, the analysis and the task-state sections', () => {
    expect(compactSummaryCore(summary)).toBe(
      [
        'Summary:',
        '1. Primary Request and Intent:',
        '   - Deploy the shop API to eu-west-3 on Fridays only.',
        '3. All user messages:',
        '   - "never deploy on a Monday"',
      ].join('\n'),
    );
  });

  it('drops an <analysis> block, and leaves a summary of another shape as it is', () => {
    expect(
      compactSummaryCore('<analysis>thinking</analysis>\n<summary>The user lives in Porto.</summary>'),
    ).toBe('<summary>The user lives in Porto.</summary>');
    const plain = 'The user prefers pnpm.\nAnalysis: none needed.';
    expect(compactSummaryCore(plain)).toBe(plain);
  });
});

describe('collapseWhitespace', () => {
  /** The plain form: every run of whitespace or control characters to one space, then trimmed. */
  const plainly = (text: string): string =>
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    text.replace(/[\s\0-\x08\x0E-\x1F\x7F]+/g, ' ').trim();

  it.each([
    [
      'prose with lone spaces comes back as it is',
      'we moved to Porto last week',
      'we moved to Porto last week',
    ],
    ['newlines, tabs and runs become one space', ' a\n\n b\t\tc  d \r\n', 'a b c d'],
    ['control characters go with the whitespace', 'a\0b\x1b[0m c\x7F', 'a b [0m c'],
    ['Unicode spaces count', '\u00a0a\u2003\u2028b\ufeff', 'a b'],
    ['nothing but blanks', ' \n\t\0 ', ''],
  ])('%s', (_name, text, expected) => {
    expect(collapseWhitespace(text)).toBe(expected);
  });

  it('gives what the plain form gives on random mixes of letters, spaces and control characters', () => {
    const alphabet = [...'ab  \n\t\r\0\x1b\x7f\u00a0\u2009\u3000é'];
    const random = createRandom(7);
    for (let round = 0; round < 2_000; round += 1) {
      let text = '';
      const length = Math.floor(random() * 24);
      for (let index = 0; index < length; index += 1)
        text += alphabet[Math.floor(random() * alphabet.length)];
      expect(collapseWhitespace(text), JSON.stringify(text)).toBe(plainly(text));
    }
  });
});
