/**
 * The container files, read (no Docker engine runs the tests): images pinned, no volume nothing uses, and the
 * Claude Code mount next to the PID-namespace setting its lock needs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(`${root}docker-compose.yml`, 'utf8');
const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');

interface Compose {
  services: Record<string, { image?: string; volumes?: string[]; environment?: Record<string, string> }>;
  volumes?: Record<string, unknown>;
}
const compose = parse(composeText) as Compose;

describe('docker-compose.yml and the Dockerfile', () => {
  it('pin every image to a full release, not a floating major tag', () => {
    const images = Object.values(compose.services).flatMap((service) =>
      service.image === undefined ? [] : [service.image],
    );
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image, image).toMatch(/:\d+\.\d+\.\d+(-[a-z]+)?$|@sha256:/);
  });

  it('declare only volumes a service mounts, and mount no folder dreamd never writes', () => {
    const mounted = new Set(
      Object.values(compose.services).flatMap((service) =>
        (service.volumes ?? []).map((volume) => volume.split(':')[0]!),
      ),
    );
    for (const name of Object.keys(compose.volumes ?? {})) expect(mounted.has(name), name).toBe(true);
    expect(composeText).not.toContain('DREAMD_STATE_DIR');
    expect(dockerfile).not.toContain('/data/state');
  });

  it('say next to the Claude Code mount that its lock needs the host PID namespace', () => {
    const mount = composeText.indexOf('~/.claude/projects:/claude/projects');
    const pid = composeText.indexOf('# pid: host');
    expect(mount).toBeGreaterThan(-1);
    expect(pid).toBeGreaterThan(mount);
    expect(composeText.slice(mount, pid)).toMatch(/consolidate-lock holds the PID/);
  });
});
