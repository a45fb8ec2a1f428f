import { setTimeout as pause } from 'node:timers/promises';

/**
 * Waits until `condition` holds: for a state (a job finished, Redis refused a write, a file appeared), never for
 * time to pass. Asks again every `intervalMs` (20) and fails naming `what` after `timeoutMs` (60 s: a hang guard,
 * long enough for a machine running other suites). The one
 * place the tests poll; kept free of vitest so child processes of the tests can use it too.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
  what = 'condition',
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/** Like `eventually`, for a value: the first one `read` gives that is not undefined. */
export async function eventuallyValue<T>(
  read: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
  what = 'value',
): Promise<T> {
  let value: T | undefined;
  await eventually(
    async () => {
      value = await read();
      return value !== undefined;
    },
    timeoutMs,
    what,
  );
  return value as T;
}

/**
 * The time a fake model or a fake job takes to do its work, so that calls overlap as they do against a real
 * model. Not a wait of the test: the test then waits for what the calls did.
 */
export function modelWork(milliseconds: number): Promise<void> {
  return pause(milliseconds);
}
