import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { showsProgress } from '../../src/cli/progress.js';
import { runCliCaptured } from '../support/cli.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function workspace(): string {
  return tempDirRemovedAfterTest('conventions');
}

interface ErrorEnvelope {
  ok: false;
  command: string;
  error: { name: string; message: string; code?: string; fix?: string };
}

describe('CLI conventions', () => {
  it('prints the package version with --version and -V, exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const run = await runCliCaptured([flag], { cwd: workspace() });
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe(VERSION);
    }
  });

  it('shows the global --json and --config in every subcommand help', async () => {
    for (const argv of [
      ['history', '--help'],
      ['memory', 'show', '--help'],
      ['doctor', '--help'],
    ]) {
      const run = await runCliCaptured(argv, { cwd: workspace() });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Global Options:');
      expect(run.stdout).toContain('--json');
      expect(run.stdout).toContain('--config <path>');
    }
  });

  it('reports a usage error as the JSON envelope under --json, exit 2, and nothing on stderr', async () => {
    const unknownOption = await runCliCaptured(['history', '--frobnicate', '--json'], { cwd: workspace() });
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toBe('');
    expect(unknownOption.json<ErrorEnvelope>()).toMatchObject({
      ok: false,
      command: 'history',
      error: { name: 'UsageError', code: 'commander.unknownOption', fix: 'see dreamd history --help' },
    });

    const unknownCommand = await runCliCaptured(['--json', 'frobnicate'], { cwd: workspace() });
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.json<ErrorEnvelope>()).toMatchObject({
      ok: false,
      command: 'dreamd',
      error: { name: 'UsageError', code: 'commander.unknownCommand' },
    });

    const missingArgument = await runCliCaptured(['rollback', '--json'], { cwd: workspace() });
    expect(missingArgument.code).toBe(2);
    expect(missingArgument.json<ErrorEnvelope>().error.code).toBe('commander.missingArgument');
  });

  it('keeps usage errors as text without --json', async () => {
    const run = await runCliCaptured(['history', '--frobnicate'], { cwd: workspace() });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain("unknown option '--frobnicate'");
  });

  it('reports a config error as the envelope, naming the command, exit 2', async () => {
    const run = await runCliCaptured(['history', '--json'], {
      cwd: workspace(),
      env: { DREAMD_MIN_SESSIONS: 'many' },
    });
    expect(run.code).toBe(2);
    const envelope = run.json<ErrorEnvelope>();
    expect(envelope).toMatchObject({ ok: false, command: 'history', error: { name: 'ConfigError' } });
    expect(envelope.error.message).toContain('DREAMD_MIN_SESSIONS');
  });

  it('draws the progress bar when stderr is a terminal, whatever stdout is, and never under --json', () => {
    expect(showsProgress({ stderrIsTty: true }, false)).toBe(true);
    expect(showsProgress({ stderrIsTty: false }, false)).toBe(false);
    expect(showsProgress({}, false)).toBe(false);
    expect(showsProgress({ stderrIsTty: true }, true)).toBe(false);
  });
});
