/**
 * Spaces written before the archive keep `## Superseded` sections in their topic files. A run moves such a
 * section's facts to `.dreamd/archive.json` only when it rewrites that file anyway; a file it does not write
 * keeps every byte, its superseded entries included.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import { createModel } from '../../src/model/index.js';
import { loadMemory, renderMemory, rollbackRun } from '../../src/space/index.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace, FORCED_RUN } from '../support/space.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { fact } from '../memory/helpers.js';

const fake = useFakeAnthropic();

describe('moving ## Superseded sections to the archive', () => {
  it('moves them out of a file the run rewrites, and leaves a file it does not write as it is', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-02-lisbon-delivery.json'] });
    const memoryDir = test.space.memoryDir;
    mkdirSync(memoryDir, { recursive: true });
    const hamburg = fact({ id: 'f-yyyyyyyyy2', title: 'Lives in Hamburg', body: 'Lives in Hamburg.' });
    const berlin = fact({
      id: 'f-zzzzzzzzz2',
      title: 'Lives in Berlin',
      body: 'Lives in Berlin.',
      status: 'superseded',
      supersededBy: hamburg.id,
      supersededOn: '2026-11-20',
    });
    const postgres = fact({ id: 'f-pppppppp17', title: 'Database', body: 'Runs on Postgres 17.' }, 'project');
    const mysql = fact(
      {
        id: 'f-mmmmmmmm08',
        title: 'Database before',
        body: 'Ran on MySQL 8.',
        status: 'superseded',
        supersededBy: postgres.id,
        supersededOn: '2026-11-20',
      },
      'project',
    );
    const old = renderMemory(await loadMemory(memoryDir), [hamburg, berlin, postgres, mysql]);
    for (const [file, text] of old) if (text !== null) writeFileSync(join(memoryDir, file), text);
    const projectBefore = readFileSync(join(memoryDir, 'project.md'), 'utf8');
    const userBefore = readFileSync(join(memoryDir, 'user.md'), 'utf8');
    expect(userBefore).toContain('## Superseded');
    expect(projectBefore).toContain('## Superseded');

    fake.server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const summary = await createConsolidator({
      config: test.config,
      model: () => createModel(test.config.model, { retryBaseDelayMs: 1, retryMaxDelayMs: 5 }),
    })(test.space, FORCED_RUN);
    expect(summary.status).toBe('completed');
    expect(summary.archived).toBe(1);

    const userAfter = readFileSync(join(memoryDir, 'user.md'), 'utf8');
    expect(userAfter).not.toContain('Lives in Berlin');
    expect(userAfter).toContain('Lisbon');
    expect(readFileSync(join(memoryDir, 'project.md'), 'utf8')).toBe(projectBefore);
    const memory = await loadMemory(memoryDir);
    expect(memory.archived.map((entry) => [entry.fact.id, entry.fact.supersededBy, entry.reason])).toEqual([
      [berlin.id, hamburg.id, 'superseded'],
    ]);
    // The project file's superseded entry is still read where it is.
    expect(memory.facts.find((f) => f.id === mysql.id)?.status).toBe('superseded');

    await rollbackRun(memoryDir, summary.runId);
    expect(readFileSync(join(memoryDir, 'user.md'), 'utf8')).toBe(userBefore);
    expect((await loadMemory(memoryDir)).archived).toEqual([]);
  });
});
