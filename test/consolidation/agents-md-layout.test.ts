/**
 * A space that writes two layouts from one set of facts: Claude Code's memory folder (one file per fact,
 * MEMORY.md) and dreamd's block of the repository's AGENTS.md (`agentsMd`), through the real consolidation and
 * the real Anthropic SDK against the fake server (the scripted extractor answers).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { agentsLine } from '../../src/memory/agents-block.js';
import { splitIndexFile } from '../../src/memory/index-block.js';
import { loadMemory, rollbackRun } from '../../src/space/index.js';
import { type ScriptedFact } from '../../harness/scripted-extractor.js';
import { snapshotDirectory } from '../support/space.js';
import { tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';
import { claudeCodeHome, type ClaudeCodeHome, HELLO_SCRIPT_FACT, HOOK_BAIL_OUT_FACT } from './helpers.js';

const BUDGET = 1024;
const PERSON = '# Agents\n\nRun `make check` before you push.\r\nNo trailing line break here';

const FACTS: readonly ScriptedFact[] = [
  HELLO_SCRIPT_FACT,
  HOOK_BAIL_OUT_FACT,
  {
    trigger: 'hello.sh',
    type: 'reference',
    title: 'Shell notes',
    body: 'Notes on the shell scripts of the repository.',
    description: 'Notes on the shell scripts',
  },
  // More project facts than the budget holds: the block stays within it and counts the rest.
  ...Array.from({ length: 20 }, (_, index): ScriptedFact => ({
    trigger: 'hello.sh',
    type: 'project',
    title: `Script convention ${index + 1}`,
    body: `Convention number ${index + 1} for the shell scripts of the repository, written out at some length.`,
    description: `Shell script convention ${index + 1}`,
  })),
];

const fake = useFakeAnthropic({ facts: FACTS });

/** A Claude Code project whose space also writes the block of `repo/AGENTS.md`, holding `agentsText` at first. */
function space(agentsText: string | null): ClaudeCodeHome & { agentsMd: string } {
  const home = claudeCodeHome(fake, {
    space: { agentsMd: 'repo/AGENTS.md', agentsMdBudget: BUDGET },
    prepare: (root) => {
      mkdirSync(join(root, 'repo'));
      if (agentsText !== null) writeFileSync(join(root, 'repo', 'AGENTS.md'), agentsText);
    },
  });
  return { ...home, agentsMd: join(home.root, 'repo', 'AGENTS.md') };
}

describe('a space with a Claude Code folder and agentsMd', () => {
  it('writes both from one consolidation, keeps every byte of the person’s AGENTS.md, stays within budget, and rollback restores it', async () => {
    const { config, memoryDir, agentsMd, consolidate } = space(PERSON);
    expect(config.spaces[0]?.agentsMd).toBe(agentsMd);
    const summary = await consolidate();
    expect(summary.status).toBe('completed');

    // One set of facts behind both: every fact in AGENTS.md is an active fact of the memory folder, as written there.
    const memory = await loadMemory(memoryDir);
    const active = memory.facts.filter((fact) => fact.owner !== 'other' && fact.status === 'active');
    expect(active).toHaveLength(FACTS.length);
    const index = splitIndexFile(readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8'));
    expect(index.kind).toBe('block');
    const text = readFileSync(agentsMd, 'utf8');
    const parts = splitIndexFile(text, { file: agentsMd, legacy: false });
    expect(parts.kind).toBe('block');
    expect(parts.before + parts.after).toBe(PERSON);
    const listed = active.filter((fact) => parts.blockLines.includes(agentsLine(fact)));
    expect(listed.map((fact) => fact.type).sort()).toEqual(expect.arrayContaining(['feedback', 'project']));
    // Shared with the team: references too; never a fact about a person.
    expect(listed.some((fact) => fact.type === 'user')).toBe(false);
    const blockBytes = Buffer.byteLength(text) - Buffer.byteLength(PERSON);
    expect(blockBytes).toBeLessThanOrEqual(BUDGET);
    const left = active.filter((fact) => fact.type !== 'user').length - listed.length;
    expect(left).toBeGreaterThan(0);
    expect(parts.blockLines).toContain(`(${left} more facts in dreamd's memory folder, not listed here)`);
    expect(summary.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: agentsMd, reason: expect.stringMatching(/agentsMdBudget/) }),
      ]),
    );

    // A second run finds nothing new and changes neither output.
    const memoryAfter = [...snapshotDirectory(memoryDir)].filter(([file]) => !file.startsWith('.dreamd/'));
    expect((await consolidate()).status).not.toBe('failed');
    expect(readFileSync(agentsMd, 'utf8')).toBe(text);
    expect([...snapshotDirectory(memoryDir)].filter(([file]) => !file.startsWith('.dreamd/'))).toEqual(
      memoryAfter,
    );

    // The same transaction: rollback of the run gives the person's AGENTS.md back, byte for byte.
    await rollbackRun(memoryDir, summary.runId);
    expect(readFileSync(agentsMd, 'utf8')).toBe(PERSON);
  });

  it('creates AGENTS.md when it is missing, and rollback removes it again', async () => {
    const { memoryDir, agentsMd, consolidate } = space(null);
    const summary = await consolidate();
    expect(summary.status).toBe('completed');
    const text = readFileSync(agentsMd, 'utf8');
    expect(splitIndexFile(text, { file: agentsMd, legacy: false }).before).toBe('');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(BUDGET);
    await rollbackRun(memoryDir, summary.runId);
    expect(existsSync(agentsMd)).toBe(false);
  });

  it('leaves an AGENTS.md past the size dreamd edits alone, unread, and says so; memory is still written', async () => {
    const huge = `# Agents\n${'A line a person wrote about the build.\n'.repeat(120_000)}`;
    const { memoryDir, agentsMd, consolidate } = space(huge);
    const summary = await consolidate();
    expect(summary.status).toBe('completed');
    expect(readFileSync(agentsMd, 'utf8')).toBe(huge);
    expect(summary.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: agentsMd,
          reason: expect.stringMatching(/MB, past the 4 MB dreamd edits/),
        }),
      ]),
    );
    expect((await loadMemory(memoryDir)).facts.some((fact) => fact.status === 'active')).toBe(true);
  });

  it('refuses an agentsMd that is not an AGENTS.md file, naming the space field and the fix', () => {
    const root = tempDirRemovedAfterTest('agents-md-config');
    const path = join(root, 'dreamd.config.json');
    writeFileSync(
      path,
      JSON.stringify({ spaces: [{ id: 'repo', sessions: 's', memory: 'm', agentsMd: 'README.md' }] }),
    );
    expect(() => loadConfig({ path, env: {}, cwd: root })).toThrow(/agentsMd.*AGENTS\.md/s);
  });
});
