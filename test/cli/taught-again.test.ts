/**
 * A rule people have to teach again, end to end in both layouts: four sessions teach it (the first saves it,
 * three later ones say it again, one in other words), each consolidated by its own run through the real SDK
 * against the fake server (the scripted extractor answers). Then `memory show --json` says `retaught: 3`, the
 * rule heads its section of MEMORY.md and the AGENTS.md block, and `status` names it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Fact } from '../../src/memory/types.js';
import type { ScriptedFact } from '../../harness/scripted-extractor.js';
import { runCliCaptured } from '../support/cli.js';
import { modelEnv, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';
import { FORCED_RUN, fastConsolidator } from '../support/space.js';

const RULE_TITLE = 'No semicolons';
const FACTS: readonly ScriptedFact[] = [
  {
    trigger: 'SEMI-ONE',
    type: 'feedback',
    title: RULE_TITLE,
    body: 'Do not use semicolons in TypeScript code.',
  },
  {
    trigger: 'SEMI-TWO',
    type: 'feedback',
    title: RULE_TITLE,
    body: 'Do not use semicolons in TypeScript code.',
  },
  // The same rule in other words (a rewording, as reconcile judges merges).
  {
    trigger: 'SEMI-THREE',
    type: 'feedback',
    title: 'Semicolons',
    body: 'Never use semicolons in the TypeScript code.',
  },
  {
    trigger: 'SEMI-FOUR',
    type: 'feedback',
    title: RULE_TITLE,
    body: 'Do not use semicolons in TypeScript code.',
  },
  // Rules learned last, by a fifth session, and so more recent than the rule: without the count they come first.
  {
    trigger: 'LATER',
    type: 'feedback',
    title: 'Imperative commits',
    body: 'Write commit messages in the imperative mood.',
  },
  {
    trigger: 'LATER',
    type: 'feedback',
    title: 'Small pull requests',
    body: 'Keep each pull request under 300 changed lines.',
  },
  {
    trigger: 'LATER',
    type: 'project',
    title: 'Database',
    body: 'The service stores its data in Postgres 17.',
  },
];
const fake = useFakeAnthropic({ facts: FACTS });
const DAYS = ['2026-11-02', '2026-11-09', '2026-11-16', '2026-11-23', '2026-11-30'];
const TRIGGERS = ['SEMI-ONE', 'SEMI-TWO', 'SEMI-THREE', 'SEMI-FOUR', 'LATER'];

const env = () => modelEnv(fake.url);

/** A space of native sessions writing `layout` and the block of `repo/AGENTS.md`; runs each session on its own. */
async function teachFourTimes(layout: 'topics' | 'claude-code') {
  const root = tempDirRemovedAfterTest('taught-again');
  const sessions = join(root, 'sessions');
  mkdirSync(sessions);
  mkdirSync(join(root, 'repo'));
  const path = join(root, 'dreamd.config.json');
  const space = { id: 'repo', sessions, memory: join(root, 'memory'), layout, agentsMd: 'repo/AGENTS.md' };
  writeFileSync(path, JSON.stringify({ spaces: [space] }));
  const config = loadConfig({ path, env: env(), cwd: root });
  for (const [index, day] of DAYS.entries()) {
    const id = `teach-${index + 1}`;
    writeFileSync(
      join(sessions, `${id}.json`),
      JSON.stringify({
        id,
        startedAt: `${day}T09:00:00Z`,
        endedAt: `${day}T09:30:00Z`,
        messages: [
          { role: 'user', content: `${TRIGGERS[index]}: a rule for the TypeScript code, please.` },
          { role: 'assistant', content: 'Understood, I will follow it.' },
        ],
      }),
    );
    // The run of the day, after the session: a session of a later day started after the rule was saved.
    const summary = await fastConsolidator(config, { now: () => new Date(`${day}T18:00:00Z`) })(
      config.spaces[0]!,
      FORCED_RUN,
    );
    expect(summary.status).toBe('completed');
  }
  return { root, memoryDir: join(root, 'memory'), agentsMd: join(root, 'repo', 'AGENTS.md') };
}

describe.each(['topics', 'claude-code'] as const)('a rule taught in four sessions, %s layout', (layout) => {
  it('shows retaught: 3, heads its section of MEMORY.md and of AGENTS.md, and status names it', async () => {
    const { root, memoryDir, agentsMd } = await teachFourTimes(layout);

    const show = await runCliCaptured(['memory', 'show', '--json'], { cwd: root, env: env() });
    expect(show.code).toBe(0);
    const facts = show.data<{ facts: (Fact & { retaught: number })[] }>().facts;
    const rule = facts.find((fact) => fact.type === 'feedback' && /semicolons/i.test(fact.body));
    expect(facts.filter((fact) => /semicolons/i.test(fact.body))).toHaveLength(1);
    expect(rule?.retaught).toBe(3);
    expect(rule?.taughtAgain).toEqual({
      count: 3,
      last: '2026-11-23',
      sessions: ['teach-2', 'teach-3', 'teach-4'],
    });
    expect(facts.filter((fact) => fact.id !== rule?.id).map((fact) => fact.retaught)).toEqual([0, 0, 0]);
    const text = await runCliCaptured(['memory', 'show'], { cwd: root, env: env() });
    expect(text.stdout).toContain('(taught again 3×, last 2026-11-23)');
    const one = await runCliCaptured(['memory', 'show', '--fact', rule?.id ?? ''], { cwd: root, env: env() });
    expect(one.stdout).toContain('  taught again 3×, last 2026-11-23 (sessions teach-2, teach-3, teach-4)');
    const oneJson = await runCliCaptured(['memory', 'show', '--fact', rule?.id ?? '', '--json'], {
      cwd: root,
      env: env(),
    });
    expect(oneJson.data<{ fact: { retaught: number } }>().fact.retaught).toBe(3);

    // First of the feedback lines of MEMORY.md, saying it is a repeated correction.
    const index = readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8').split('\n');
    const feedback = index.filter((line) => /^- \[/.test(line) && /feedback/.test(line));
    expect(feedback).toHaveLength(3);
    expect(feedback[0]).toMatch(/^- \[.*[Ss]emicolons\].* — Repeated correction \(taught again 3×\): /);
    if (layout === 'claude-code') {
      const file = feedback[0]?.match(/\]\((feedback_[a-z0-9_]+\.md)\)/)?.[1] ?? '';
      expect(readFileSync(join(memoryDir, file), 'utf8')).toMatch(
        /\ndescription: "?Repeated correction \(taught again 3×\): /,
      );
    }

    // First line of the AGENTS.md block.
    const agentLines = readFileSync(agentsMd, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('- **'));
    expect(agentLines[0]).toMatch(/^- \*\*.*[Ss]emicolons\*\* \(repeated correction, taught again 3×\): /);

    const status = await runCliCaptured(['status', '--json'], { cwd: root, env: env() });
    const [spaceStatus] = status.data<{ taughtAgain: { id: string; count: number; last: string }[] }[]>();
    expect(spaceStatus?.taughtAgain).toEqual([
      expect.objectContaining({ id: rule?.id, type: 'feedback', count: 3, last: '2026-11-23' }),
    ]);
    const statusText = await runCliCaptured(['status'], { cwd: root, env: env() });
    expect(statusText.stdout).toContain('rules your agents keep forgetting');
    expect(statusText.stdout).toMatch(
      new RegExp(`3× ".*[Ss]emicolons" \\(feedback, ${rule?.id ?? ''}\\), last 2026-11-23`),
    );
  });
});
