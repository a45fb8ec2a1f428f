import { createHash } from 'node:crypto';

/**
 * What the daemon's `GET /daemon` says of a space's directories when no token protects the API: a hash of the
 * sessions and memory folders, which a CLI with the same config computes and compares, so any local user learns
 * whether two configs agree and nothing of where they point.
 */
export function directoriesFingerprint(sessionsDir: string, memoryDir: string): string {
  return createHash('sha256').update(`${sessionsDir}\0${memoryDir}`).digest('hex').slice(0, 32);
}
