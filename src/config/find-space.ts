import { ConfigError } from '../errors.js';
import type { Config, Space } from './schema.js';

/** Finds a space by id or throws a ConfigError listing the ones that exist. */
export function findSpace(config: Config, id: string | undefined): Space {
  if (id === undefined) {
    if (config.spaces.length === 1) return config.spaces[0]!;
    if (config.spaces.length === 0) {
      throw new ConfigError(
        config.discover === undefined
          ? 'no space is configured; add one to "spaces"'
          : 'no space: discovery found no repository yet (run `dreamd discover` to see why), and none is configured',
        'space',
      );
    }
    throw new ConfigError(
      `several spaces are configured (${config.spaces.map((space) => space.id).join(', ')}); name one`,
      'space',
    );
  }
  const space = config.spaces.find((candidate) => candidate.id === id);
  if (space === undefined) {
    throw new ConfigError(
      `no space "${id}"; configured spaces: ${config.spaces.map((candidate) => candidate.id).join(', ')}`,
      'space',
    );
  }
  return space;
}
