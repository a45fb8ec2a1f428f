#!/usr/bin/env node
// In a checkout (src/ present, dev dependencies installed) the CLI runs from the TypeScript source, compiled
// file by file into .cache/ when a source changed (run-source.js), so it is never stale; tsx is the fallback
// when that cache cannot be written. An installed package or an image ships only the compiled dist/ (built by
// `npm run build`, which `npm pack` runs): plain Node.
import { existsSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// `dreamd --version` alone is answered here, from package.json: in a checkout, starting tsx alone takes longer
// than the 300 ms a version may take. Anything else (`--json --version` too) goes through the CLI.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`);
  process.exit(0);
}
const source = join(root, 'src', 'cli', 'main.ts');
const compiled = join(root, 'dist', 'src', 'cli', 'main.js');

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined; // a checkout installed with --omit=dev: tsx is a dev dependency
  }
}

/** How the CLI runs when the checkout's compiled source cannot: the source through tsx, else dist/. */
async function runWithTsxOrDist() {
  const tsx = existsSync(source) ? await loadTsx() : undefined;
  if (tsx !== undefined) {
    tsx.register();
    await import(pathToFileURL(source).href);
  } else if (existsSync(compiled)) {
    await import(pathToFileURL(compiled).href);
  } else {
    process.stderr.write(
      'dreamd: neither the compiled CLI (dist/) nor tsx to run the source was found; ' +
        'run `npm install` (for tsx) or `npm run build`\n',
    );
    process.exit(2);
  }
}

const ranSource = existsSync(source) && (await (await import('./run-source.js')).runSource(root));
if (!ranSource) await runWithTsxOrDist();
