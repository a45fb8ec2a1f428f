/**
 * What the screen saw in a held-back fact, read from its reason: the run record's counts and `dreamd status`
 * (which also reads reasons earlier runs wrote) group held-back facts by it.
 */
import { describe, expect, it } from 'vitest';
import { countHeldBack, heldBackKind } from '../../src/consolidation/summary/held-back.js';

describe('heldBackKind', () => {
  it.each([
    ['contains a secret', 'secret'],
    ['carries a redacted secret', 'secret'],
    ['reads as an instruction: addressed to an AI agent', 'instruction'],
    ['reads as an instruction together with the fact next to it: deletes outside the project', 'instruction'],
    ['the unfinished first or last part of an instruction held back next to it', 'instruction'],
    ['part of an instruction assembled across messages of the session', 'instruction'],
    ["only evidence is the assistant's words: a rule or preference needs the user", 'assistant'],
    ['only evidence is a tool result (WebFetch): a rule or preference needs the user', 'tool'],
    ["only evidence is a sub-agent's report: a rule or preference needs the user", 'sub-agent'],
    [
      "only evidence is text the agent read, by the model's own label: a rule or preference needs the user",
      'read',
    ],
    // Written by runs before the reason named what it saw.
    [
      'only evidence is text the agent read (a tool result, a page, a file): a rule or preference needs the user',
      'read',
    ],
    ['contains a secret (held back with "Deploy key", which it says in other words)', 'secret'],
    ['a person wrote this entry', 'other'],
  ])('reads "%s" as %s', (reason, kind) => {
    expect(heldBackKind(reason)).toBe(kind);
  });
});

describe('countHeldBack', () => {
  it('counts by kind and leaves out kinds with none', () => {
    expect(
      countHeldBack([
        'contains a secret',
        'only evidence is a tool result (Read): a rule or preference needs the user',
        'only evidence is a tool result (Bash): a rule or preference needs the user',
      ]),
    ).toEqual({ secret: 1, tool: 2 });
    expect(countHeldBack([])).toEqual({});
  });
});
