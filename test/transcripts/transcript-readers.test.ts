import { describe, expect, it } from 'vitest';
import { TranscriptFormat } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import {
  TRANSCRIPT_READERS,
  readerFor,
  type TranscriptReader,
} from '../../src/transcripts/transcript-readers.js';
import { CLAUDE_CODE_FIXTURES, FIXTURE, readTranscript } from './helpers.js';

describe('the transcript readers table', () => {
  it('has a reader for every format the config accepts', () => {
    for (const format of TranscriptFormat.options) {
      expect(readerFor(format)).toBe(TRANSCRIPT_READERS[format]);
    }
    expect(Object.keys(TRANSCRIPT_READERS).sort()).toEqual([...TranscriptFormat.options].sort());
  });

  it('refuses a format no reader claims instead of reading it as Claude Code', async () => {
    const unknown = 'gemini-cli' as TranscriptFormat;
    expect(() => readerFor(unknown)).toThrow(ConfigError);
    expect(() => readerFor('toString' as TranscriptFormat)).toThrow(
      /no transcript reader for format "toString"/,
    );
    const failure = await readTranscript(unknown, CLAUDE_CODE_FIXTURES, FIXTURE.helloWorld).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toContain('the formats are native, claude-code, codex');
  });

  it('is a table the compiler checks: a format without a reader does not type-check', () => {
    const partial = { native: TRANSCRIPT_READERS.native };
    // @ts-expect-error: 'claude-code' and 'codex' have no reader in this table.
    const checked: Record<TranscriptFormat, TranscriptReader> = partial;
    expect(Object.keys(checked)).toEqual(['native']);
  });

  it('lists the whole tree only for a format whose files sit in sub-folders (Codex)', () => {
    expect(
      Object.entries(TRANSCRIPT_READERS)
        .filter(([, reader]) => reader.nestedFolders)
        .map(([format]) => format),
    ).toEqual(['codex']);
  });
});
