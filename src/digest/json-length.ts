/**
 * Length of `JSON.stringify(value)` without building the string: the digest reports the raw size of the
 * messages it read (for the size ratios), and copying megabytes of tool results only to measure them
 * allocates as much again as the transcript.
 */

/**
 * Characters that JSON.stringify writes as more than themselves: quote, backslash, control characters and
 * surrogates (a surrogate counts only when lone, which the loop below decides).
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Characters JSON.stringify writes for a string: the quotes, two for `"` `\\` `\n` `\r` `\t` `\b` `\f`,
 * six for other control characters and for lone surrogates (`\u001b`, `\udc00`). Most strings hold none of
 * these: one regex test (V8 scans at over 1 GB/s) answers for them; the rest are counted from the first
 * such character by a plain loop that allocates nothing.
 */
function stringLength(value: string): number {
  const first = value.search(NEEDS_ESCAPE);
  if (first === -1) return value.length + 2;
  let length = value.length + 2;
  for (let index = first; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) continue;
    if (code === 0x22 || code === 0x5c || (code >= 0x08 && code <= 0x0d && code !== 0x0b)) length += 1;
    else if (code < 0x20) length += 5;
    else if (code <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
      else length += 5;
    } else length += 5;
  }
  return length;
}

/** `JSON.stringify(value)?.length ?? 0`, computed by walking plain data (objects, arrays, primitives). */
export function jsonLength(value: unknown): number {
  if (typeof value === 'string') return stringLength(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value)?.length ?? 0;
  if ('toJSON' in value && typeof value.toJSON === 'function') return JSON.stringify(value)?.length ?? 0;
  if (Array.isArray(value)) {
    let length = 2 + Math.max(0, value.length - 1);
    for (const item of value as unknown[]) {
      const itemLength = jsonLength(item);
      // undefined, functions and symbols are written as null inside arrays.
      length += itemLength === 0 ? 4 : itemLength;
    }
    return length;
  }
  let length = 2;
  let members = 0;
  for (const [key, item] of Object.entries(value)) {
    const itemLength = jsonLength(item);
    if (itemLength === 0) continue; // undefined, functions and symbols are left out of objects.
    length += stringLength(key) + 1 + itemLength;
    members += 1;
  }
  return length + Math.max(0, members - 1);
}
