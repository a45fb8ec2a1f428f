import { resolve } from 'node:path';
import type { SessionSource, TranscriptFormat } from '../config/schema.js';
import { isInsideDirectory } from './session-path.js';

/** Where one session file of a space is read from: its format, the folder that holds it, its absolute path. */
export interface LocatedSessionFile {
  readonly format: TranscriptFormat;
  readonly sessionsDir: string;
  readonly path: string;
}

/** A space, or a scan of one: its first folder and format, and its sources when it has several. */
export interface SessionFolders {
  readonly sessionsDir: string;
  readonly format: TranscriptFormat;
  readonly sources?: readonly SessionSource[] | undefined;
}

/**
 * Locates a file of a space as the scan and the ledger name it: relative to `sessionsDir` in a space of one
 * folder, absolute in a space of several (then the source whose folder holds it, the deepest when folders
 * nest). Undefined when no source of the space holds the file any longer (a source removed from the config).
 */
export function locateSessionFile(space: SessionFolders, file: string): LocatedSessionFile | undefined {
  if (space.sources === undefined) {
    const sessionsDir = resolve(space.sessionsDir);
    return { format: space.format, sessionsDir, path: resolve(sessionsDir, file) };
  }
  const path = resolve(file);
  let best: SessionSource | undefined;
  for (const source of space.sources) {
    const folder = resolve(source.sessionsDir);
    if (!isInsideDirectory(folder, path)) continue;
    if (best === undefined || folder.length > resolve(best.sessionsDir).length) best = source;
  }
  return best === undefined
    ? undefined
    : { format: best.format, sessionsDir: resolve(best.sessionsDir), path };
}
