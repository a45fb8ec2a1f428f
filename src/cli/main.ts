import { processIo } from './output.js';
import { runCli } from './run-cli.js';

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
