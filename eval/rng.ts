/** The seeded random stream the generated datasets draw from: the same seed, the same draws. */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

export interface Rng {
  int(from: number, to: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  /** Removes and returns a random item. */
  take<T>(items: T[]): T;
}

export function rngOf(seed: number): Rng {
  const generator: RandomGenerator = xoroshiro128plus(seed);
  const int = (from: number, to: number) => uniformInt(generator, from, to);
  return {
    int,
    pick: (items) => items[int(0, items.length - 1)]!,
    chance: (probability) => int(0, 999) < probability * 1000,
    take: (items) => items.splice(int(0, items.length - 1), 1)[0]!,
  };
}
