/**
 * Builds `eval/dataset/memorycode/dialogues.json.gz`, the MemoryCode sample the eval reads, from a checkout of
 * github.com/for-ai/MemoryCode (Apache-2.0): `npx tsx eval/memorycode-sample.ts <MemoryCode>/dataset`. The
 * dataset's 360 dialogues come in twelve lengths (1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50 and 100 sessions), 30
 * of each; the sample draws {@link PER_LENGTH} of each length with a seeded stream, so short and long ones
 * (the 100-session ones among them) are all there, 1,400 sessions in all. The dialogues are kept as they are,
 * every field; only the choice is ours. Run once, by hand: nothing at eval time reads outside the repository.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rngOf } from './rng.js';

/** Dialogues drawn of each length: 5 of 30, 60 in all. */
export const PER_LENGTH = 5;
/** The seed of the draw; the same seed, the same sample. */
export const SAMPLE_SEED = 57;

async function main(dir: string): Promise<void> {
  const files = (await readdir(dir))
    .filter((name) => /^dialogue_\d+\.json$/.test(name))
    .sort((a, b) => Number(/\d+/.exec(a)?.[0]) - Number(/\d+/.exec(b)?.[0]));
  const byLength = new Map<number, { name: string; dialogue: { sessions: unknown[] } }[]>();
  for (const name of files) {
    const dialogue = JSON.parse(await readFile(join(dir, name), 'utf8')) as { sessions: unknown[] };
    const length = dialogue.sessions.length;
    byLength.set(length, [...(byLength.get(length) ?? []), { name, dialogue }]);
  }
  const rng = rngOf(SAMPLE_SEED);
  const sample: Record<string, unknown> = {};
  for (const length of [...byLength.keys()].sort((a, b) => a - b)) {
    const pool = [...byLength.get(length)!];
    const drawn = Array.from({ length: Math.min(PER_LENGTH, pool.length) }, () => rng.take(pool));
    for (const { name, dialogue } of drawn.sort((a, b) =>
      a.name.localeCompare(b.name, 'en', { numeric: true }),
    ))
      sample[name.replace(/\.json$/, '')] = dialogue;
  }
  const out = new URL('./dataset/memorycode/dialogues.json.gz', import.meta.url);
  await writeFile(out, gzipSync(JSON.stringify(sample), { level: 9 }));
  console.log(`${Object.keys(sample).length} dialogues: ${Object.keys(sample).join(', ')}`);
}

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: npx tsx eval/memorycode-sample.ts <MemoryCode>/dataset');
await main(dir);
