/**
 * A one-fact file (the claude-code layout) that someone else wrote while a run committed: the run's fact waits in
 * pending, never lost, and a person's own edit of the same fact stays theirs.
 */
import { describe, expect, it } from 'vitest';
import { renderFactFile } from '../../src/memory/fact-file.js';
import { factsToHold } from '../../src/space/deferred-facts.js';
import { fact } from '../memory/helpers.js';

const OURS = fact(
  { id: 'f-abcdefghij', title: 'Deploys on Thursday', body: 'Deploys go out on Thursday.' },
  'project',
);
const FILE = 'project_deploys_on_thursday.md';

describe('a deferred one-fact file', () => {
  it("holds the run's fact when another writer put a file of theirs at the name", () => {
    const planned = renderFactFile({ ...OURS, file: FILE }).text;
    const theirs =
      '---\nname: Deploys\ndescription: our deploy notes\nmetadata:\n  type: project\n---\n\nMondays.\n';
    const held = factsToHold(FILE, theirs, planned);
    expect(held.map((item) => [item.id, item.body, item.file])).toEqual([[OURS.id, OURS.body, undefined]]);
    // No file at the name when the commit looked again: the fact is not on disk either, so it waits too.
    expect(factsToHold(FILE, null, planned)).toHaveLength(1);
  });

  it('holds nothing when the file on disk is the same fact, as dreamd wrote it or as a person edited it', () => {
    const planned = renderFactFile({ ...OURS, file: FILE, sources: ['s-1', 's-2'] }).text;
    const same = renderFactFile({ ...OURS, file: FILE, sources: ['s-1', 's-2'] }).text;
    expect(factsToHold(FILE, same, planned)).toEqual([]);
    const edited = renderFactFile({ ...OURS, file: FILE }).text.replace(
      'Deploys go out on Thursday.',
      'Deploys go out on Friday now.',
    );
    expect(factsToHold(FILE, edited, planned)).toEqual([]);
  });
});
