import { findSpace } from '../config/load.js';
import type { Config, Space } from '../config/schema.js';

/**
 * The spaces a command works on: the one named (a ConfigError, exit 2, when it does not exist), or every
 * configured space when none is named.
 */
export function selectSpaces(config: Config, id: string | undefined): readonly Space[] {
  return id === undefined ? config.spaces : [findSpace(config, id)];
}
