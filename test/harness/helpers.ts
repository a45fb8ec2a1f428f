import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

// Shared by the provisioning tests (redis-server, chromium): folders of their own stand for the machine's PATH,
// and a recorded `run` stands in for apt-get so nothing is installed here.

/** A fresh, empty folder: on a PATH of its own it is a machine without the program. */
export function emptyBin(): string {
  return tempDirRemovedAfterTest('bin');
}

/** An executable shell script named `name` in `directory` that exits 0; returns its path. */
export function fakeExecutable(directory: string, name: string): string {
  const path = join(directory, name);
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
}

/**
 * A stand-in for apt-get that records each command line it is asked to run and succeeds; on `apt-get install`
 * it calls `onInstall` (which puts the program where the installer would).
 */
export function recordedApt(onInstall: () => void = () => undefined): {
  calls: string[];
  run: (command: string, args: readonly string[]) => { status: number; output: string };
} {
  const calls: string[] = [];
  return {
    calls,
    run: (command, args) => {
      calls.push([command, ...args].join(' '));
      if (args[0] === 'install') onInstall();
      return { status: 0, output: '' };
    },
  };
}

/** What an installer (ensureRedisServer, ensureChromium) takes that these tests set. */
interface InstallerOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly fallbackPath: string;
  readonly canInstall: boolean;
  readonly run: (command: string, args: readonly string[]) => { status: number | null; output: string };
  readonly log: (line: string) => void;
}

/**
 * Runs `ensure` on a machine of its own: a PATH of one empty folder (holding `onPath` when named), nothing at the
 * Debian path, and a recorded apt-get (or `run`) whose install puts `installs` on that PATH. What it returned,
 * the folder, the apt-get command lines and the log lines; it throws what `ensure` throws.
 */
export function provision(
  ensure: (options: InstallerOptions) => string,
  machine: {
    readonly onPath?: string;
    readonly installs?: string;
    readonly canInstall?: boolean;
    readonly run?: InstallerOptions['run'];
  } = {},
): { found: string; bin: string; calls: string[]; lines: string[] } {
  const bin = emptyBin();
  if (machine.onPath !== undefined) fakeExecutable(bin, machine.onPath);
  const installs = machine.installs;
  const apt = recordedApt(installs === undefined ? undefined : () => fakeExecutable(bin, installs));
  const lines: string[] = [];
  const found = ensure({
    env: { PATH: bin },
    fallbackPath: join(bin, 'absent', 'debian-path'),
    canInstall: machine.canInstall ?? true,
    run: machine.run ?? apt.run,
    log: (line) => lines.push(line),
  });
  return { found, bin, calls: apt.calls, lines };
}
