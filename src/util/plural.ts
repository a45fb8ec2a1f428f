/**
 * A count with its noun, singular for exactly one: `counted(1, 'session')` is `1 session`, `counted(3,
 * 'session')` is `3 sessions`. `plural` is the noun's plural when adding an s does not make it (`repository`).
 */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
