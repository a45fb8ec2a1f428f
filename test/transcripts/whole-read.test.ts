import { execFileSync } from 'node:child_process';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { readSessionFile } from '../../src/transcripts/read-session.js';
import { SYNC_READ_MAX_BYTES } from '../../src/transcripts/transcript-bytes.js';
import { MAX_BYTES, nativeDocument } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

/**
 * The whole-file read of a native transcript directly in the sessions directory (found with one `lstat`, no
 * `realpath`): the same bytes are accepted and refused as before, and anything but a regular file takes the
 * full path resolution.
 */
describe('whole read of a native transcript', () => {
  const directory = useTempDir('whole');
  let sessionsDir: string;
  let realSessionsDir: string;
  beforeEach(async () => {
    sessionsDir = join(directory.path, 'sessions');
    await mkdir(sessionsDir);
    realSessionsDir = await realpath(sessionsDir);
  });

  const read = (file: string) =>
    readSessionFile(file, { format: 'native', sessionsDir, realSessionsDir, maxBytes: MAX_BYTES });
  const reasonOf = (file: string) =>
    read(file).then(
      () => 'read',
      (error: unknown) => (error as { reason?: string }).reason,
    );

  it('drops a leading byte order mark, as a fatal TextDecoder does', async () => {
    const text = nativeDocument();
    await writeFile(
      join(sessionsDir, 'bom.json'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
    );
    await writeFile(join(sessionsDir, 'plain.json'), text);
    const withBom = await read('bom.json');
    const plain = await read('plain.json');
    expect(withBom.session.messages).toEqual(plain.session.messages);
    expect(withBom.size).toBe(plain.size + 3);
  });

  it('reads a file over the synchronous read limit (through the thread pool) as it reads a small one', async () => {
    const long = 'the deploy window is Tuesday '.repeat(40_000);
    const big = nativeDocument({ messages: [{ role: 'user', content: long }] });
    expect(Buffer.byteLength(big)).toBeGreaterThan(SYNC_READ_MAX_BYTES);
    const small = nativeDocument({ messages: [{ role: 'user', content: long.slice(0, 1_000) }] });
    await writeFile(join(sessionsDir, 'big.json'), big);
    await writeFile(join(sessionsDir, 'small.json'), small);
    await writeFile(join(sessionsDir, 'bad-big.json'), `${big.slice(0, -1)},`);

    const bigRead = await read('big.json');
    const smallRead = await read('small.json');

    expect(bigRead.size).toBe(Buffer.byteLength(big));
    expect(bigRead.session.messages[0]?.parts[0]).toMatchObject({ kind: 'text' });
    expect(smallRead.session.messages[0]?.parts[0]).toMatchObject({
      kind: 'text',
      text: long.slice(0, 1_000),
    });
    expect(await reasonOf('bad-big.json')).toBe('invalid-json');
  });

  it('refuses a byte order mark that is not at the start, invalid UTF-8 and NUL bytes', async () => {
    const text = nativeDocument({ messages: [{ role: 'user', content: 'héllo' }] });
    await writeFile(join(sessionsDir, 'bom-inside.json'), ` \uFEFF${text}`);
    // The bytes of "é" replaced: by an encoded surrogate (U+D800), by an overlong encoding of NUL.
    const [head = '', tail = ''] = text.split('é');
    const around = (bytes: number[]) =>
      Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
    await writeFile(join(sessionsDir, 'lone-surrogate.json'), around([0xed, 0xa0, 0x80]));
    await writeFile(join(sessionsDir, 'overlong.json'), around([0xc0, 0x80]));
    await writeFile(join(sessionsDir, 'two-bytes.json'), around([0xc3, 0xa9]));
    await writeFile(
      join(sessionsDir, 'truncated.json'),
      Buffer.concat([Buffer.from(text), Buffer.from([0xe2, 0x82])]),
    );
    await writeFile(join(sessionsDir, 'nul.json'), Buffer.concat([Buffer.from(text), Buffer.from([0])]));
    expect(await reasonOf('bom-inside.json')).toBe('invalid-json');
    expect(await reasonOf('two-bytes.json')).toBe('read');
    expect(await reasonOf('lone-surrogate.json')).toBe('invalid-utf8');
    expect(await reasonOf('overlong.json')).toBe('invalid-utf8');
    expect(await reasonOf('truncated.json')).toBe('invalid-utf8');
    expect(await reasonOf('nul.json')).toBe('binary');
  });

  it('follows a link that stays inside and refuses one that leads out', async () => {
    await writeFile(join(sessionsDir, 'target.json'), nativeDocument({ id: 'target' }));
    await symlink(join(sessionsDir, 'target.json'), join(sessionsDir, 'inside-link.json'));
    await writeFile(join(directory.path, 'outside.json'), nativeDocument({ id: 'outside' }));
    await symlink(join(directory.path, 'outside.json'), join(sessionsDir, 'outside-link.json'));
    expect((await read('inside-link.json')).session.id).toBe('target');
    expect(await reasonOf('outside-link.json')).toBe('outside-directory');
  });

  it('refuses a directory and a FIFO without waiting on the FIFO', async () => {
    await mkdir(join(sessionsDir, 'folder.json'));
    expect(await reasonOf('folder.json')).toBe('unreadable');
    if (process.platform === 'win32') return;
    execFileSync('mkfifo', [join(sessionsDir, 'pipe.json')]);
    expect(await reasonOf('pipe.json')).toBe('unreadable');
  });

  it('reads a file in a subdirectory through the full resolution', async () => {
    await mkdir(join(sessionsDir, 'nested'));
    await writeFile(join(sessionsDir, 'nested', 'inner.json'), nativeDocument({ id: 'inner' }));
    expect((await read('nested/inner.json')).session.id).toBe('inner');
  });
});
