/**
 * The selector-style recall of `npm run eval`: which files it picks, what it reads of them, and that it refuses
 * to compare the layouts on a memory whose topic files Claude Code would read whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dataset } from '../../eval/format.js';
import { renderSelectorReport } from '../../eval/run.js';
import { SELECTOR_READ_BYTES, pickFiles, selectorRecall } from '../../eval/selector.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

function memoryFile(name: string, description: string, body: string): string {
  return `---\nname: ${name}\ndescription: ${description}\nmetadata:\n  type: user\n---\n\n${body}\n`;
}

describe('the selector', () => {
  it('picks at most 5 files by name and description alone, and reads only their first 4,096 bytes', async () => {
    const dir = tempDirRemovedAfterTest('selector');
    writeFileSync(join(dir, 'MEMORY.md'), '- [Dog](user_dog.md) — the dog Rex is a beagle\n');
    writeFileSync(
      join(dir, 'user_dog.md'),
      memoryFile('Dog', 'Bruno has a dog named Rex', 'Rex is a beagle.'),
    );
    // The body names the dog too, but the selector never sees bodies.
    writeFileSync(join(dir, 'user_cat.md'), memoryFile('Cat', 'The cat Mia', 'Rex the dog chases Mia.'));
    for (let index = 0; index < 6; index += 1)
      writeFileSync(
        join(dir, `project_dog_${index}.md`),
        memoryFile(`Dog walk ${index}`, 'dog walking rota', 'x'),
      );
    writeFileSync(
      join(dir, 'user.md'),
      memoryFile(
        'User',
        'Dog facts',
        `${'filler '.repeat(SELECTOR_READ_BYTES / 7)}\nRex is three years old.`,
      ),
    );
    const picked = await pickFiles(dir, "What breed is Bruno's dog Rex?");
    expect(picked).toHaveLength(5);
    expect(picked[0]?.file).toBe('user_dog.md');
    expect(picked.map((pick) => pick.file)).not.toContain('user_cat.md');
    expect(picked.map((pick) => pick.file)).not.toContain('MEMORY.md');
    const big = await pickFiles(dir, 'dog facts');
    const topic = big.find((pick) => pick.file === 'user.md');
    expect(Buffer.byteLength(topic?.read ?? '')).toBeLessThanOrEqual(SELECTOR_READ_BYTES);
    expect(topic?.read).not.toContain('three years old');
    expect(await pickFiles(dir, 'quantum chromodynamics')).toEqual([]);
  });
});

describe('selector recall over a dataset', () => {
  it('reports each layout side by side on the shipped dataset', async () => {
    const file = new URL('../../eval/dataset/dreamd-small.json', import.meta.url);
    const dataset = Dataset.parse(JSON.parse(readFileSync(file, 'utf8')));
    const report = await selectorRecall(dataset, { mode: 'oracle' });
    expect(report.layouts.map((figure) => figure.layout)).toEqual(['topics', 'claude-code']);
    const [topics, claudeCode] = report.layouts;
    expect(topics?.largestFileBytes).toBeGreaterThan(SELECTOR_READ_BYTES);
    expect(claudeCode?.largestFileBytes).toBeLessThan(SELECTOR_READ_BYTES);
    expect(claudeCode?.files).toBeGreaterThan(topics?.files ?? 0);
    expect(topics?.questions).toBe(13);
    expect(renderSelectorReport(report)).toContain('| claude-code |');
  });

  it('fails loudly when no topic file passes 4,096 bytes: there is nothing to compare', async () => {
    const dataset = Dataset.parse([
      {
        sample_id: 'tiny',
        conversation: {
          session_1_date_time: '2026-03-02T09:00:00Z',
          session_1: [{ speaker: 'Ana', dia_id: 'D1:1', text: 'I work at a bakery.' }],
        },
        observation: { session_1_observation: { Ana: [['Ana works at a bakery.', 'D1:1']] } },
        qa: [
          { question: 'Where does Ana work?', answer: 'bakery', evidence: ['D1:1'], category: 'single-hop' },
        ],
      },
    ]);
    await expect(selectorRecall(dataset, { mode: 'oracle' })).rejects.toThrow(
      /no topic file passes 4096 bytes/,
    );
  });
});
