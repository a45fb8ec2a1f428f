import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Finds an executable on the PATH, like `which`. Returns its path or undefined. */
export function which(name: string, path: string | undefined = process.env.PATH): string | undefined {
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}
