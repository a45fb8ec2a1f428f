import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FOOTPRINT_FLAGS, footprintFlags } from '../../src/cli/heap-footprint.js';

const run = promisify(execFile);

describe('footprintFlags', () => {
  it('sets both flags when the user set neither', () => {
    expect(footprintFlags([], undefined)).toEqual(FOOTPRINT_FLAGS);
    expect(footprintFlags(['--enable-source-maps'], '--max-old-space-size=512')).toEqual(FOOTPRINT_FLAGS);
  });

  it.each([
    [['--semi-space-growth-factor=2'], undefined],
    [[], '--heap_growing_percent=80'],
    [[], '--trace-gc --semi_space_growth_factor=4'],
  ])('leaves V8 alone when the user chose (%j, %j)', (execArgv, nodeOptions) => {
    expect(footprintFlags(execArgv, nodeOptions)).toEqual([]);
  });
});

describe('applyHeapFootprint', () => {
  // A child allocates 2 million short-lived objects a third of which live a little while: left alone, V8
  // grows its young generation to 32 MB; with the footprint flags it stays at its starting size.
  const script = (apply: boolean): string => `
    import v8 from 'node:v8';
    ${apply ? "const { applyHeapFootprint } = await import('./src/cli/heap-footprint.ts'); applyHeapFootprint([], undefined);" : ''}
    const keep = [];
    for (let i = 0; i < 2_000_000; i++) {
      const item = { a: 'x' + i, b: [i, i + 1] };
      if (i % 3 === 0) keep.push(item);
      if (keep.length > 20_000) keep.length = 0;
    }
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    console.log(young.space_size);`;
  const youngBytes = async (apply: boolean): Promise<number> => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script(apply)],
      {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { ...process.env, NODE_OPTIONS: '' },
      },
    );
    return Number(stdout.trim());
  };

  it('keeps the young generation at its starting size where V8 alone grows it', async () => {
    const [alone, applied] = await Promise.all([youngBytes(false), youngBytes(true)]);
    expect(alone).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    expect(applied).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});
