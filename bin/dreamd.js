#!/usr/bin/env node
// In a checkout (src/ present) the CLI runs from the TypeScript source through tsx, so it is never stale;
// in an image or package built with `npm run build` (no src/), it runs the compiled dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'cli', 'main.ts');
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
} else {
  await import(pathToFileURL(join(root, 'dist', 'src', 'cli', 'main.js')).href);
}
