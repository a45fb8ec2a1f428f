/**
 * The library's public face: `src/index.ts` and the agent kit name each export (no `export *` that would publish
 * whatever a module adds), and every error a public function can throw is among the exports, so a caller can
 * tell it apart with `instanceof`.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as library from '../../src/index.js';
import * as agentKit from '../../src/agent-kit.js';
import { listTs as sourceFiles } from './source-files.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Errors that never leave dreamd: caught where they are thrown and turned into one of the public ones. */
const INTERNAL_ERRORS: Record<string, string> = {
  AnswerFactLimitError:
    'consolidation/extraction/answer-reader.ts: an answer past a fact limit, caught by extract.ts, which asks again in halves',
  AnswerInvalidError:
    'consolidation/extraction/answer-reader.ts: an answer with no valid fact, caught by extract.ts; its sessions wait',
  JsonTextError: 'the native transcript reader turns it into a TranscriptError naming the file',
  RunNotFoundError: 'the CLI reports it as a usage error (exit 2); no library function throws it',
  SessionNotFoundError:
    'cli/session-marks.ts: `sessions exclude` and `include` report it (exit 1); no library function throws it',
  AmbiguousSessionError:
    'cli/session-marks.ts: `sessions exclude` and `include` report it (exit 2); no library function throws it',
};

describe('the public API', () => {
  it('names each export of src/index.ts and src/agent-kit.ts', () => {
    for (const file of ['index.ts', 'agent-kit.ts']) {
      expect(readFileSync(join(SRC, file), 'utf8'), file).not.toMatch(/^export \*/m);
    }
  });

  it('exports every error class declared under src/, but the internal ones it names', () => {
    const declared = sourceFiles(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^export class (\w+Error) extends /gm)].map((match) => ({
        name: match[1]!,
        file: relative(SRC, file),
      })),
    );
    expect(declared.length).toBeGreaterThan(15);
    const exported = library as Record<string, unknown>;
    for (const { name, file } of declared) {
      if (name in INTERNAL_ERRORS) continue;
      const value = exported[name];
      expect(typeof value, `${name} of ${file} is not exported by src/index.ts`).toBe('function');
      expect((value as { prototype: unknown }).prototype, name).toBeInstanceOf(Error);
    }
    for (const name of Object.keys(INTERNAL_ERRORS)) expect(exported[name], name).toBeUndefined();
  });

  it('gives the agent kit the same error classes as the library (one identity for instanceof)', () => {
    for (const name of [
      'DreamdError',
      'ConfigError',
      'ModelError',
      'LockBusyError',
      'ToolInputError',
    ] as const)
      expect(agentKit[name], name).toBe(library[name]);
    expect(library.ClaudeCodeLockBusyError.prototype).toBeInstanceOf(library.LockBusyError);
  });
});
