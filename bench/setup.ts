/** Temp directories, configuration and spaces for the figures. Nothing is written inside the repository. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.js';
import type { Config, Space } from '../src/config/schema.js';

export async function makeTempRoot(label: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `dreamd-bench-${label}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** The space `writeWorkload` laid out as `root/space-NNN/{sessions,memory}`. */
export function workloadSpace(root: string, index: number): Space {
  const directory = join(root, `space-${String(index).padStart(3, '0')}`);
  return {
    id: `space-${String(index).padStart(3, '0')}`,
    sessionsDir: join(directory, 'sessions'),
    memoryDir: join(directory, 'memory'),
    format: 'native',
  };
}

/**
 * Defaults, as a user without a config file has them, with the model pointed at a fake server (when given)
 * and the listed spaces. Retries are off: a failing call is a benchmark bug, not something to wait for.
 */
export function benchConfig(root: string, spaces: readonly Space[], modelUrl?: string): Config {
  const config = loadConfig({
    env: {
      ANTHROPIC_API_KEY: 'sk-ant-bench-key',
      DREAMD_MODEL_MAX_RETRIES: '0',
      ...(modelUrl !== undefined ? { DREAMD_MODEL_BASE_URL: modelUrl } : {}),
    },
    cwd: root,
  });
  return { ...config, spaces };
}
