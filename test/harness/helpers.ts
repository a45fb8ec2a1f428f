import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Shared by the provisioning tests (redis-server, chromium): folders of their own stand for the machine's PATH,
// and a recorded `run` stands in for apt-get so nothing is installed here.

/** A fresh, empty folder: on a PATH of its own it is a machine without the program. */
export function emptyBin(): string {
  return mkdtempSync(join(tmpdir(), 'dreamd-bin-'));
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
