import { applyHeapFootprint } from './heap-footprint.js';

// Before the rest of the CLI is loaded: its modules are the first few megabytes the young generation sees.
applyHeapFootprint();
const [{ processIo }, { runCli }] = await Promise.all([import('./output.js'), import('./run-cli.js')]);
const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
