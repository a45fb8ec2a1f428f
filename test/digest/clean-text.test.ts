import { describe, expect, it } from 'vitest';
import { compactSummaryCore } from '../../src/digest/clean-text.js';

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
