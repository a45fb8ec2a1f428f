import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryFormatError } from '../../src/errors.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, FORCED_RUN, fastConsolidator, RUN_NOW } from '../support/space.js';

// A run whose recovery of an earlier transaction fails releases the locks it took.

describe('a run whose recovery fails', () => {
  const fake = useFakeAnthropic({ scope: 'all' });

  it('ends with the error and leaves no lock behind, run after run', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true });
    // A committed transaction whose manifest was damaged from outside: recovery refuses to guess.
    const staged = join(test.space.memoryDir, '.dreamd', 'staging', 'run-damaged');
    mkdirSync(staged, { recursive: true });
    writeFileSync(join(staged, 'COMMITTED'), '');
    writeFileSync(join(staged, 'manifest.json'), '{ not json');
    const consolidate = fastConsolidator(test.config, { now: () => RUN_NOW });
    for (const attempt of [1, 2]) {
      await expect(consolidate(test.space, FORCED_RUN), `run ${attempt}`).rejects.toBeInstanceOf(
        MemoryFormatError,
      );
      expect(existsSync(join(test.space.memoryDir, '.dreamd', 'lock')), `lock after run ${attempt}`).toBe(
        false,
      );
    }
    expect(fake.server.requests).toHaveLength(0);
  });
});
