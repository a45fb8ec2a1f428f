import { ConfigError } from '../errors.js';
import type { Config, Space } from './schema.js';

/**
 * The pure half of naming a space: the spaces a name is looked up among, the one space a command takes when
 * none is named, and the error that says what was tried and what exists. The half that reads the disk (the
 * repository of a path, discovery) is `findSpace` in `discovery/find-space.ts`, the one resolution every
 * command, the agent kit and `dreamd chat` use.
 */

/** What a space is looked up among. */
export interface SpaceChoices {
  /** The configured spaces, in the config's order (a config that already holds discovered ones: those too). */
  readonly configured: readonly Space[];
  /** The spaces discovery made, after the configured ones; undefined when `discover` is off. */
  readonly discovered: readonly Space[] | undefined;
}

/** Every space of the choices: configured first, then discovered. */
export function everySpace(choices: SpaceChoices): readonly Space[] {
  return [...choices.configured, ...(choices.discovered ?? [])];
}

/** The space with that id, configured ones first; undefined when none has it. */
export function spaceWithId(choices: SpaceChoices, id: string): Space | undefined {
  return everySpace(choices).find((space) => space.id === id);
}

/** How a name can be given, for the end of every error: the fix. */
const HOW_TO_NAME = 'name a space by its id, or by a folder of its repository (`.` for the one you are in)';

/** `configured spaces: a, b; discovered spaces: c` (or why there are none), for an error. */
export function spacesLine(choices: SpaceChoices, config: Pick<Config, 'source'>): string {
  const ids = (spaces: readonly Space[]) => spaces.map((space) => space.id).join(', ') || 'none';
  const discovered =
    choices.discovered === undefined
      ? `discovery is off (add "discover": ["claude-code", "codex"] to ${config.source ?? 'dreamd.config.json'} to find repositories)`
      : choices.discovered.length === 0
        ? 'discovered spaces: none (`dreamd discover` shows what was found and skipped)'
        : `discovered spaces: ${ids(choices.discovered)}`;
  return `configured spaces: ${ids(choices.configured)}; ${discovered}`;
}

/**
 * The space a command works on when none is named: the only one there is. None, or several, is a ConfigError
 * (exit 2) that lists them and says how to name one.
 */
export function onlySpace(choices: SpaceChoices, config: Pick<Config, 'source'>): Space {
  const spaces = everySpace(choices);
  if (spaces.length === 1) return spaces[0]!;
  if (spaces.length === 0) {
    throw new ConfigError(
      choices.discovered === undefined
        ? 'no space is configured; add one to "spaces"'
        : 'no space: discovery found no repository yet (run `dreamd discover` to see why), and none is configured',
      'space',
    );
  }
  throw new ConfigError(
    `several spaces (${spaces.map((space) => space.id).join(', ')}); ${HOW_TO_NAME}` +
      (config.source === undefined ? '' : ` (config: ${config.source})`),
    'space',
  );
}

/**
 * No space answers to `argument`: `tried` says what was looked at (`no space "x"`, `no space serves the
 * repository /r (from .)`); the error lists every space and says how to name one.
 */
export function noSuchSpace(
  tried: string,
  choices: SpaceChoices,
  config: Pick<Config, 'source'>,
): ConfigError {
  return new ConfigError(`${tried}; ${spacesLine(choices, config)}; ${HOW_TO_NAME}`, 'space');
}
