import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AGENTS_BUDGET_BYTES,
  AGENTS_LINE_CHARS,
  agentsLine,
  isAgentFact,
  isAgentsPath,
  renderAgentsFile,
} from '../../src/memory/agents-block.js';
import { mergeArrived } from '../../src/memory/arrived-bytes.js';
import { BLOCK_BEGIN, splitIndexFile } from '../../src/memory/index-block.js';
import type { Fact } from '../../src/memory/types.js';
import { fact, handWrittenFile, numberedFacts, withoutBlock } from './helpers.js';

function factsOf(count: number, seed: number): Fact[] {
  return numberedFacts(count, seed, (index) => ({
    title: `Rule ${seed}-${index} ${'ü'.repeat(index % 40)}`,
    body: `Always run the tests before a commit, case ${index} ${'word '.repeat(index % 60)}`,
  }));
}

const FILE = '/repo/AGENTS.md';

const BOM = '\uFEFF';

/** A file a person wrote, saved by any editor: with or without a byte-order mark, CRLF or LF line breaks. */
const handFile = fc
  .tuple(
    handWrittenFile([fc.constant('# Memory index'), fc.constant('## Build and test')], 200),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([text, bom, crlf]) => `${bom ? BOM : ''}${crlf ? text.replace(/\n/g, '\r\n') : text}`);

describe("dreamd's block of a repository's AGENTS.md", () => {
  it('never changes a byte outside the block, over several runs, on any file a person wrote; the block stays within its budget', () => {
    fc.assert(
      fc.property(
        handFile,
        fc.array(fc.tuple(fc.nat(80), fc.integer({ min: 512, max: 9000 })), { minLength: 1, maxLength: 4 }),
        (original, runs) => {
          let text: string | null = original === '' ? null : original;
          for (const [run, [count, budget]] of runs.entries()) {
            const block = renderAgentsFile(factsOf(count, run), { existing: text, file: FILE, budget });
            expect(block.blockBytes).toBeLessThanOrEqual(budget);
            if (block.text === null) continue;
            text = block.text;
            expect(withoutBlock(text)).toBe(original);
            // In place: a byte-order mark stays the first bytes, and the block starts a line.
            expect(text.startsWith(BOM)).toBe(original.startsWith(BOM));
            const body = `\n${text.replace(/^\uFEFF/, '')}`;
            if (block.included.length > 0) expect(body).toContain(`\n${BLOCK_BEGIN}\n`);
            const parts = splitIndexFile(text, { file: FILE, legacy: false });
            expect(parts.before + parts.after).toBe(original);
            expect(parts.kind).toBe(
              block.included.length > 0 ? 'block' : original === '' ? 'none' : 'foreign',
            );
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('holds project, reference and repository feedback facts, never a user fact, fair across types, most read and newest first', () => {
    const facts = [
      ...Array.from({ length: 60 }, (_, index) =>
        fact(
          {
            id: `f-p${String(index).padStart(8, '0')}`,
            title: `Project fact ${index}`,
            body: 'x'.repeat(200),
            updated: '2026-11-01',
          },
          'project',
        ),
      ),
      fact({ id: 'f-newproject', title: 'Newest project fact', updated: '2026-11-30' }, 'project'),
      fact({ id: 'f-readproject', title: 'Most read project fact', updated: '2026-10-01' }, 'project'),
      fact({ id: 'f-feedback01', title: 'Tabs, not spaces', body: 'Indent with tabs.' }, 'feedback'),
      fact({ id: 'f-userstyle1', title: 'Prefers small commits', body: 'Keep commits small.' }, 'user'),
      fact({ id: 'f-userrole01', title: 'Data scientist', body: 'Works on the churn model.' }, 'user'),
      fact({ id: 'f-reference1', title: 'Dashboards', body: 'Grafana at grafana.internal.' }, 'reference'),
      fact({ id: 'f-oldrule001', title: 'Old rule', status: 'superseded' }, 'feedback'),
    ];
    const block = renderAgentsFile(facts, {
      existing: '# AGENTS.md\n\nRun `make test`.\n',
      file: FILE,
      budget: 2048,
      use: { 'f-readproject': { reads: 5 } },
    });
    expect(block.blockBytes).toBeLessThanOrEqual(2048);
    expect(block.included).toContain('f-feedback01');
    expect(block.included).toContain('f-reference1');
    expect(block.included).toContain('f-readproject');
    expect(block.included).toContain('f-newproject');
    // Personal stays personal: no user fact, working style or not.
    for (const left of ['f-userstyle1', 'f-userrole01', 'f-oldrule001'])
      expect(block.included).not.toContain(left);
    // The most read and newest are chosen first; the lines are written in the stable order (by id).
    const projects = block.included.filter((id) => id.startsWith('f-p') || id.includes('project'));
    expect(projects).toEqual([...projects].sort());
    expect(block.omitted.length).toBeGreaterThan(0);
    expect(block.included.length + block.omitted.length).toBe(64);
    expect(block.text).toContain(
      `(${block.omitted.length} more facts in dreamd's memory folder, not listed here)`,
    );
    expect(block.problems).toEqual([expect.stringMatching(/AGENTS\.md: \d+ of 64 fact\(s\).*2,048 bytes/)]);
    expect(block.text?.startsWith('# AGENTS.md\n\nRun `make test`.\n<!-- dreamd:begin')).toBe(true);
    // The default budget.
    expect(renderAgentsFile(facts, { existing: null, file: FILE }).blockBytes).toBeLessThanOrEqual(
      AGENTS_BUDGET_BYTES,
    );
  });

  it('keeps a byte-order mark a person saved before the block, and puts the block after one', () => {
    const project = [fact({ id: 'f-project001' }, 'project')];
    const written = renderAgentsFile(project, { existing: 'mine', file: FILE }).text ?? '';
    expect(written.startsWith(BLOCK_BEGIN)).toBe(true);
    // An editor saved the file with a byte-order mark: it is the person's, not part of the begin marker's line.
    const saved = `${BOM}${written}`;
    const again = renderAgentsFile([...project, fact({ id: 'f-project002' }, 'project')], {
      existing: saved,
      file: FILE,
    }).text;
    expect(again?.startsWith(`${BOM}${BLOCK_BEGIN}\n`)).toBe(true);
    expect(withoutBlock(again ?? '')).toBe(`${BOM}mine`);
    expect(renderAgentsFile([], { existing: saved, file: FILE }).text).toBe(`${BOM}mine`);
    const noFinalBreak = renderAgentsFile(project, { existing: `${BOM}mine`, file: FILE }).text;
    expect(noFinalBreak).toBe(`${BOM}${written}`);
  });

  it('leaves a file whose markers a person damaged as it is, and names the file and the fix', () => {
    const damaged = `mine\n${BLOCK_BEGIN}\n- a line\n`;
    const block = renderAgentsFile([fact({ id: 'f-project001' }, 'project')], {
      existing: damaged,
      file: FILE,
    });
    expect(block.text).toBeNull();
    expect(block.problems).toEqual([
      expect.stringMatching(/^\/repo\/AGENTS\.md: one of dreamd's markers .* Put both marker lines back/),
    ]);
  });

  it('creates no file for nothing, and takes its block out when nothing is left to list', () => {
    expect(renderAgentsFile([], { existing: null, file: FILE }).text).toBeNull();
    const written = renderAgentsFile([fact({ id: 'f-project001' }, 'project')], {
      existing: 'mine\n',
      file: FILE,
    });
    expect(written.text).toContain('- **Title of f-project001**: Body of f-project001.');
    expect(renderAgentsFile([], { existing: written.text, file: FILE }).text).toBe('mine\n');
  });

  it('writes one line a fact, cut to its length, how to apply it in brackets', () => {
    const long = fact(
      { id: 'f-feedback01', title: 'Rule', body: 'word '.repeat(200), howToApply: 'Do it\nnow.' },
      'feedback',
    );
    const trailer = ` <!-- dreamd f-feedback01 ${long.updated} -->`;
    expect(agentsLine(long).endsWith(trailer)).toBe(true);
    expect(Array.from(agentsLine(long).slice(0, -trailer.length)).length).toBe(AGENTS_LINE_CHARS);
    expect(agentsLine({ ...long, body: 'Short.' })).toBe(`- **Rule**: Short. (Do it now.)${trailer}`);
    expect(agentsLine({ ...long, body: 'Short.' }, ['f-b', 'f-a'])).toBe(
      `- **Rule**: Short. (Do it now.) <!-- dreamd f-feedback01 ${long.updated} replaces f-a,f-b -->`,
    );
    expect(isAgentFact(fact({ id: 'f-user000001', title: 'Name', body: 'Is called Ann.' }, 'user'))).toBe(
      false,
    );
  });

  it('names only absolute AGENTS.md paths, and merges what a person wrote meanwhile outside the block', () => {
    expect(isAgentsPath('/repo/AGENTS.md')).toBe(true);
    for (const other of ['AGENTS.md', '/repo/agents.md', '/repo/../x/AGENTS.md', '/repo/MEMORY.md'])
      expect(isAgentsPath(other)).toBe(false);
    const base = 'mine\n';
    const planned =
      renderAgentsFile([fact({ id: 'f-project001' }, 'project')], { existing: base, file: FILE }).text ?? '';
    const merged = mergeArrived(FILE, base, 'mine\nadded meanwhile\n', planned);
    expect(merged).toBe(`${planned}added meanwhile\n`);
  });
});
