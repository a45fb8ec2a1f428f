import { createHash, randomBytes } from 'node:crypto';

/** Lowercase RFC 4648 base32 alphabet (no padding): ids stay readable and case-insensitive. */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** 10 base32 characters carry 50 bits: collisions are negligible for one memory directory. */
const ID_CHARS = 10;

const FACT_ID_PATTERN = /^f-[a-z2-7]{10}$/;

function toBase32(bytes: Uint8Array, length: number): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
    if (out.length >= length) break;
  }
  return out;
}

/** A new fact id: `f-` + 10 lowercase base32 characters from crypto random bytes. */
export function newFactId(): string {
  return `f-${toBase32(randomBytes(8), ID_CHARS)}`;
}

/**
 * A fact id derived from a seed (same seed, same id). Used for hand-written entries that have no anchor
 * yet, so that two loads of the same file agree on their ids (e.g. `memory show` then `memory forget <id>`).
 */
export function derivedFactId(seed: string): string {
  return `f-${toBase32(createHash('sha256').update(seed).digest(), ID_CHARS)}`;
}

export function isFactId(value: string): boolean {
  return FACT_ID_PATTERN.test(value);
}
