import fc from 'fast-check';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir, createTempDir } from '../support/fixtures.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { FACT_TYPES, TOPIC_FILES } from '../../src/memory/types.js';
import { loadMemory, renderMemory } from '../../src/space/memory-dir.js';
import { DEFERRED_FACTS_FILE, QUARANTINE_FILE } from '../../src/space/paths.js';
import { memoryHealth } from '../../src/space/memory-health.js';
import { applyFiles, fact, planCandidates, removeDir, sessionCandidate } from '../memory/helpers.js';
import { snapshotDirectory } from '../support/space.js';

const NOW = new Date('2026-12-01T00:00:00Z');
const folder = useTempDir('memory');

/** A memory folder with two facts of every type, as dreamd writes it. */
async function seedMemory(): Promise<void> {
  const facts = FACT_TYPES.flatMap((type, position) =>
    [0, 1].map((index) =>
      fact(
        {
          id: `f-seed${position}${index}aaaa`,
          title: `${type} seed ${index}`,
          body: `Seeded ${type} fact ${index}.`,
        },
        type,
      ),
    ),
  );
  await applyFiles(folder.path, renderMemory(await loadMemory(folder.path), facts, { now: NOW }));
}

async function runPlan(candidates: readonly ExtractedFact[]) {
  const plan = await planCandidates(folder.path, candidates, { runId: 'run-test', now: NOW });
  await applyFiles(folder.path, plan.files);
  return plan;
}

describe('broken memory files never lose facts', () => {
  it('holds a fact for a topic file with broken frontmatter back, says where, and writes it once the file is fixed', async () => {
    await seedMemory();
    const userFile = path.join(folder.path, 'user.md');
    const good = await readFile(userFile, 'utf8');
    const broken = good.replace(/\ntype: user\n---\n/, '\ntype: user\n');
    await writeFile(userFile, broken);

    const plan = await runPlan([sessionCandidate('s-new', 'The user moved to Porto in November.', 'user')]);
    expect(plan.files.has('user.md')).toBe(false);
    expect(await readFile(userFile, 'utf8')).toBe(broken);
    const reasons = plan.problems.map((problem) => `${problem.file}: ${problem.reason}`).join('\n');
    expect(reasons).toContain("user.md: user.md: frontmatter starts with '---' but never ends");
    expect(reasons).toContain(`held back in ${DEFERRED_FACTS_FILE}`);
    expect(await readFile(path.join(folder.path, DEFERRED_FACTS_FILE), 'utf8')).toContain('moved to Porto');
    // Meanwhile the fact is memory: search, the model and the index builder see it.
    expect((await loadMemory(folder.path)).facts.some((item) => item.body.includes('Porto'))).toBe(true);

    const health = await memoryHealth(folder.path);
    expect(health.ok).toBe(false);
    expect(health.problems.map((problem) => problem.file)).toEqual(
      expect.arrayContaining(['user.md', DEFERRED_FACTS_FILE]),
    );

    await writeFile(userFile, good);
    const after = await runPlan([]);
    expect(after.files.get(DEFERRED_FACTS_FILE)).toBeNull();
    expect(await readFile(userFile, 'utf8')).toContain('The user moved to Porto in November.');
    expect(await readFile(path.join(folder.path, 'MEMORY.md'), 'utf8')).toContain('Porto');
    expect((await memoryHealth(folder.path)).ok).toBe(true);
  });

  it('holds back the facts for a file that shares a fact id with another, and reports both files', async () => {
    await seedMemory();
    const feedbackText = await readFile(path.join(folder.path, 'feedback.md'), 'utf8');
    const copied = feedbackText.slice(
      feedbackText.indexOf('## feedback seed 0'),
      feedbackText.indexOf('## feedback seed 1'),
    );
    await writeFile(
      path.join(folder.path, 'user.md'),
      `${await readFile(path.join(folder.path, 'user.md'), 'utf8')}\n${copied}`,
    );
    const before = await readFile(path.join(folder.path, 'feedback.md'), 'utf8');

    const plan = await runPlan([
      sessionCandidate('s-f1', 'Always run the linter before committing.', 'feedback'),
      sessionCandidate('s-f2', 'Never push on Fridays after five.', 'feedback'),
    ]);
    expect(await readFile(path.join(folder.path, 'feedback.md'), 'utf8')).toBe(before);
    expect(
      plan.problems.some((problem) => problem.reason.includes('also appears in user.md; remove one copy')),
    ).toBe(true);
    const pending = await readFile(path.join(folder.path, DEFERRED_FACTS_FILE), 'utf8');
    expect(pending).toContain('linter');
    expect(pending).toContain('Fridays');
  });

  it.each([
    ['a byte-order mark', (text: string) => `\uFEFF${text}`],
    ['CRLF line ends', (text: string) => text.replace(/\n/g, '\r\n')],
    ['10 MB of text', (text: string) => `${text}${'y'.repeat(10 * 1024 * 1024)}\n`],
  ])('reads a topic file with %s, never rewrites it, and reports path and fix', async (_label, corrupt) => {
    await seedMemory();
    const file = path.join(folder.path, 'project.md');
    const bad = corrupt(await readFile(file, 'utf8'));
    await writeFile(file, bad);
    const memory = await loadMemory(folder.path);
    expect(memory.facts.some((item) => item.title === 'project seed 0')).toBe(true);
    expect(
      memory.problems.some(
        (problem) =>
          problem.file === 'project.md' && /does not rewrite it|does not rewrite files/.test(problem.reason),
      ),
    ).toBe(true);
    await runPlan([sessionCandidate('s-p', 'The API moves to version 3 in January.', 'project')]);
    expect(await readFile(file, 'utf8')).toBe(bad);
    expect(await readFile(path.join(folder.path, DEFERRED_FACTS_FILE), 'utf8')).toContain('version 3');
  });

  it('skips a symlink out of the folder and never writes through it', async () => {
    await seedMemory();
    const outside = (await createTempDir('memory')).path;
    try {
      const target = path.join(outside, 'reference.md');
      await writeFile(target, await readFile(path.join(folder.path, 'reference.md'), 'utf8'));
      await removeDir(path.join(folder.path, 'reference.md'));
      await symlink(target, path.join(folder.path, 'reference.md'));
      const before = await readFile(target, 'utf8');
      const plan = await runPlan([
        sessionCandidate('s-r', 'Dashboards live at grafana.internal/d/ops.', 'reference'),
      ]);
      expect(plan.problems.some((problem) => problem.reason.includes('outside the memory folder'))).toBe(
        true,
      );
      expect(plan.files.has('reference.md')).toBe(false);
      expect(await readFile(target, 'utf8')).toBe(before);
    } finally {
      await removeDir(outside);
    }
  });

  it('property: for any corruption of any memory file, every fact the model returned ends in memory, quarantine or pending', async () => {
    const corruption = fc.oneof(
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('drop-line' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ maxLength: 30 }) }),
      fc.record({ kind: fc.constant('copy-entry' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('bom' as const) }),
      fc.record({ kind: fc.constant('crlf' as const) }),
    );
    const corrupt = (
      text: string,
      change: { kind: string; at?: number; text?: string },
      other: string,
    ): string => {
      const at = (change.at ?? 0) % Math.max(1, text.length);
      switch (change.kind) {
        case 'truncate':
          return text.slice(0, at);
        case 'drop-line': {
          const lines = text.split('\n');
          lines.splice(at % lines.length, 1);
          return lines.join('\n');
        }
        case 'insert':
          return text.slice(0, at) + (change.text ?? '') + text.slice(at);
        case 'copy-entry': {
          const start = other.indexOf('\n## ');
          return start < 0 ? text : `${text}\n${other.slice(start + 1)}`;
        }
        case 'bom':
          return `\uFEFF${text}`;
        default:
          return text.replace(/\n/g, '\r\n');
      }
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FACT_TYPES),
        fc.constantFrom(...FACT_TYPES),
        corruption,
        fc.array(fc.constantFrom(...FACT_TYPES), { minLength: 1, maxLength: 6 }),
        async (victim, donor, change, candidateTypes) => {
          await removeDir(folder.path);
          await seedMemory();
          const victimFile = path.join(folder.path, TOPIC_FILES[victim]);
          const corrupted = corrupt(
            await readFile(victimFile, 'utf8'),
            change,
            await readFile(path.join(folder.path, TOPIC_FILES[donor]), 'utf8'),
          );
          await writeFile(victimFile, corrupted);
          const candidates = candidateTypes.map((type, index) =>
            sessionCandidate(
              `s-prop-${index}`,
              `Candidate ${index} of type ${type}: a plain fact worth keeping number ${index * 7919}.`,
              type,
            ),
          );
          const plan = await runPlan(candidates);
          const quarantined = new Set(plan.result.quarantined.flatMap((entry) => entry.candidate.sources));
          const after = await loadMemory(folder.path);
          const files = snapshotDirectory(folder.path);
          for (const item of candidates) {
            const session = item.sources[0] ?? '';
            if (quarantined.has(session)) {
              expect(files.get(QUARANTINE_FILE) ?? '').toContain(item.title);
              continue;
            }
            const holder = after.facts.find((held) => held.sources.includes(session));
            expect(holder, `${session} (${item.type}) after ${change.kind} of ${victim}`).toBeDefined();
          }
          if (
            (await loadMemory(folder.path)).broken.includes(victim) &&
            plan.files.has(TOPIC_FILES[victim]) === false
          ) {
            expect(await readFile(victimFile, 'utf8')).toBe(corrupted);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
