import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { describeConfigIssues } from './config-issues.js';
import { CONFIG_FILE_NAMES, findConfigFile, homeOf, readConfigFile } from './config-file.js';
import {
  ConfigFile,
  HttpUrl,
  type Config,
  type DiscoverConfig,
  type DiscoverSettings,
  type SessionSource,
  type Space,
  type SpaceConfig,
} from './schema.js';

/** Name of the config file looked up from the working directory upward when no path is given (see `config-file.ts`). */
export const CONFIG_FILE_NAME = CONFIG_FILE_NAMES[0];

/**
 * Environment variables, each overriding one setting of the file. Numbers are parsed; a bad value is a
 * ConfigError naming the variable.
 */
export const ENVIRONMENT_VARIABLES = {
  DREAMD_CONFIG: 'path of the config file',
  REDIS_URL: 'redisUrl',
  DREAMD_REDIS_PREFIX: 'redisPrefix',
  DREAMD_MODEL_PROVIDER: 'model.provider',
  DREAMD_MODEL: 'model.name',
  DREAMD_MODEL_BASE_URL: 'model.baseUrl',
  DREAMD_MODEL_API_KEY: 'model.apiKey (else ANTHROPIC_API_KEY or OPENAI_API_KEY by provider)',
  ANTHROPIC_BASE_URL:
    'model.baseUrl for provider anthropic, when neither the file nor DREAMD_MODEL_BASE_URL sets it',
  OPENAI_BASE_URL:
    'model.baseUrl for provider openai-compatible, when neither the file nor DREAMD_MODEL_BASE_URL sets it',
  ANTHROPIC_AUTH_TOKEN: 'bearer token for provider anthropic (gateways), sent instead of an API key',
  DREAMD_MODEL_TIMEOUT_MS: 'model.timeoutMs',
  DREAMD_MODEL_MAX_RETRIES: 'model.maxRetries',
  DREAMD_MODEL_CONCURRENCY: 'model.concurrency',
  DREAMD_MODEL_BATCH: 'model.batch',
  DREAMD_BATCH_POLL_SECONDS: 'model.batchPollSeconds',
  DREAMD_EMBEDDINGS_BASE_URL: 'embeddings.baseUrl',
  DREAMD_EMBEDDINGS_MODEL: 'embeddings.model',
  DREAMD_SCHEDULE: 'schedule',
  DREAMD_MIN_HOURS: 'gates.minHours',
  DREAMD_MIN_SESSIONS: 'gates.minSessions',
  DREAMD_QUIET_MINUTES: 'gates.quietMinutes',
  DREAMD_MAX_SESSION_BYTES: 'limits.maxSessionBytes',
  DREAMD_DIGEST_TOKENS_PER_CALL: 'limits.digestTokensPerCall',
  DREAMD_MONTHLY_BUDGET_USD: 'limits.monthlyBudgetUsd',
  DREAMD_MEMORY_TOKENS_PER_CALL: 'limits.memoryTokensPerCall',
  DREAMD_HOST: 'server.host',
  DREAMD_PORT: 'server.port',
  DREAMD_API_TOKEN: 'server.apiToken',
  DREAMD_CONCURRENCY: 'workers.concurrency',
  DREAMD_STATE_DIR: 'stateDir',
  DREAMD_SESSIONS_DIR: 'sessions directory of the default space (no config file)',
  DREAMD_MEMORY_DIR: 'memory directory of the default space (no config file)',
  CLAUDE_CONFIG_DIR: "Claude Code's home for `discover` (else ~/.claude), as Claude Code reads it",
  CODEX_HOME: "Codex's home for `discover` (else ~/.codex), as Codex reads it",
} as const;

const NUMERIC = new Set([
  'model.timeoutMs',
  'model.maxRetries',
  'model.concurrency',
  'model.batchPollSeconds',
  'gates.minHours',
  'gates.minSessions',
  'gates.quietMinutes',
  'limits.maxSessionBytes',
  'limits.digestTokensPerCall',
  'limits.monthlyBudgetUsd',
  'limits.memoryTokensPerCall',
  'server.port',
  'workers.concurrency',
]);

export interface LoadConfigOptions {
  /**
   * Explicit config path (`--config`). Else DREAMD_CONFIG, else the nearest `dreamd.config.json` (or `.yaml`,
   * `.yml`) in `cwd` or a folder above it, up to the home folder (`findConfigFile`).
   */
  path?: string | undefined;
  /** Environment to read; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory for relative paths when there is no config file; default process.cwd(). */
  cwd?: string;
}

/** Expands a leading `~` and resolves against `base`. */
export function resolvePath(path: string, base: string): string {
  const expanded =
    path === '~' ? homedir() : path.startsWith('~/') ? resolve(homedir(), path.slice(2)) : path;
  return isAbsolute(expanded) ? resolve(expanded) : resolve(base, expanded);
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/**
 * Loads and validates the configuration: file (optional), then environment overrides, then defaults.
 * Throws ConfigError naming the field and the fix; the CLI turns it into exit code 2.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const source = configSource(options, env, cwd);
  const raw: Record<string, unknown> = source === undefined ? {} : readConfigFile(source);
  const fromEnvironment = applyEnvironment(raw, env);

  const result = ConfigFile.safeParse(raw);
  const origin = source ?? 'environment';
  if (!result.success) {
    const first = result.error.issues[0]!;
    throw new ConfigError(
      describeConfigIssues(result.error.issues, ConfigFile, { file: source, fromEnvironment }).join('\n'),
      first.path.join('.') || '(top level)',
      { cause: result.error },
    );
  }
  const file = result.data;
  const base = source !== undefined ? dirname(source) : cwd;

  if (file.model.provider === 'openai-compatible' && file.model.baseUrl === undefined) {
    throw new ConfigError(
      `${origin}: model.baseUrl (or OPENAI_BASE_URL) is required for provider "openai-compatible" (e.g. http://127.0.0.1:11434/v1 for Ollama)`,
      'model.baseUrl',
    );
  }
  if (!isLoopback(file.server.host) && file.server.apiToken === undefined) {
    throw new ConfigError(
      `${fromEnvironment.get('server.host') ?? origin}: server.host ${file.server.host} is not loopback; set DREAMD_API_TOKEN (16+ characters) to protect the API`,
      'server.apiToken',
    );
  }

  const spaces: Space[] =
    file.spaces !== undefined
      ? file.spaces.map((space, index) => ({
          id: space.id,
          ...resolveSessions(space, index, base, origin),
          memoryDir: resolvePath(space.memory, base),
          ...(space.layout === undefined ? {} : { layout: space.layout }),
          ...(space.agentsMd === undefined ? {} : { agentsMd: resolvePath(space.agentsMd, base) }),
          ...(space.agentsMdBudget === undefined ? {} : { agentsMdBudget: space.agentsMdBudget }),
          ...(space.approve === true || space.approve === 'shared' ? { approve: space.approve } : {}),
        }))
      : file.discover !== undefined
        ? [] // discovery alone: one space per repository found, no default folder
        : [
            {
              id: 'default',
              sessionsDir: resolvePath(env.DREAMD_SESSIONS_DIR || './sessions', base),
              memoryDir: resolvePath(env.DREAMD_MEMORY_DIR || './memory', base),
              format: 'native',
            },
          ];
  checkSpaces(spaces, origin);

  return {
    source,
    redisUrl: file.redisUrl,
    redisPrefix: file.redisPrefix,
    model: file.model,
    embeddings: file.embeddings,
    chat: file.chat,
    schedule: file.schedule,
    gates: file.gates,
    limits: file.limits,
    history: file.history,
    curation: file.curation,
    keepOut: file.keepOut,
    server: file.server,
    workers: file.workers,
    stateDir: resolvePath(file.stateDir ?? './.dreamd-state', base),
    spaces,
    ...(file.discover === undefined ? {} : { discover: resolveDiscover(file.discover, env, base) }),
  };
}

/** The config file: the one named (`--config`, DREAMD_CONFIG), else the one found from `cwd`, else none. */
function configSource(options: LoadConfigOptions, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const explicit = options.path ?? env.DREAMD_CONFIG;
  let source: string | undefined;
  if (explicit !== undefined && explicit !== '') {
    source = resolvePath(explicit, cwd);
    if (!existsSync(source)) {
      throw new ConfigError(
        `config file ${source} does not exist; create it or drop --config/DREAMD_CONFIG to use the default space`,
        'config',
      );
    }
  } else {
    source = findConfigFile(cwd, homeOf(env));
  }
  return source;
}

/**
 * Puts the environment's settings into the raw config (they win over the file) and returns, for each field it
 * set, `VARIABLE=value` (an error names the variable, not the file).
 */
function applyEnvironment(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Map<string, string> {
  /** Field → `VARIABLE=value`, for the fields the environment set (an error names the variable, not the file). */
  const fromEnvironment = new Map<string, string>();
  for (const [variable, field] of Object.entries(ENVIRONMENT_VARIABLES)) {
    const value = env[variable];
    if (value === undefined || value === '' || field.includes(' ')) continue;
    fromEnvironment.set(field, variable === 'DREAMD_API_TOKEN' ? variable : `${variable}=${value}`);
    if (NUMERIC.has(field)) {
      const number = Number(value);
      if (!Number.isFinite(number)) {
        throw new ConfigError(`${variable}=${value}: ${field} must be a number`, field);
      }
      setPath(raw, field, number);
    } else {
      setPath(raw, field, value);
    }
  }
  applySdkBaseUrl(raw, env);
  const providerKey =
    env.DREAMD_MODEL_API_KEY ??
    ((raw.model as { provider?: string } | undefined)?.provider === 'openai-compatible'
      ? env.OPENAI_API_KEY
      : env.ANTHROPIC_API_KEY);
  if (
    providerKey !== undefined &&
    providerKey !== '' &&
    (raw.model as { apiKey?: string } | undefined)?.apiKey === undefined
  ) {
    setPath(raw, 'model.apiKey', providerKey);
  }

  return fromEnvironment;
}

/** Each space has its own id, memory directory and sessions, and memory apart from its sessions. */
function checkSpaces(spaces: readonly Space[], origin: string): void {
  const seen = new Map<string, number>();
  spaces.forEach((space, index) => {
    const previous = seen.get(space.id);
    if (previous !== undefined) {
      throw new ConfigError(
        `${origin}: spaces.${index}.id "${space.id}" is already used by spaces.${previous}; give each space its own id`,
        `spaces.${index}.id`,
      );
    }
    seen.set(space.id, index);
  });
  const memoryOwners = new Map<string, string>();
  for (const space of spaces) {
    const owner = memoryOwners.get(space.memoryDir);
    if (owner !== undefined) {
      throw new ConfigError(
        `${origin}: spaces "${owner}" and "${space.id}" share the memory directory ${space.memoryDir}; spaces never share memory`,
        'spaces',
      );
    }
    memoryOwners.set(space.memoryDir, space.id);
  }
  const sessionOwners = new Map<string, string>();
  for (const space of spaces) {
    for (const source of space.sources ?? [{ sessionsDir: space.sessionsDir, repository: undefined }]) {
      if (space.memoryDir === source.sessionsDir) {
        throw new ConfigError(
          `${origin}: space "${space.id}" has the same directory for sessions and memory (${space.memoryDir}); ` +
            'give memory its own folder (e.g. <sessions>/memory, as Claude Code does)',
          'spaces',
        );
      }
      // Two spaces may share a folder of many repositories' sessions (Codex's) when each takes one repository.
      const key = `${source.sessionsDir}\0${source.repository ?? ''}`;
      const owner = sessionOwners.get(key);
      if (owner !== undefined && owner !== space.id) {
        throw new ConfigError(
          `${origin}: spaces "${owner}" and "${space.id}" read the same sessions directory ${source.sessionsDir}; ` +
            'each session would be consolidated into both memories: give each space its own sessions ' +
            '(or, for a folder of many repositories, a "cwd" in each source)',
          'spaces',
        );
      }
      sessionOwners.set(key, space.id);
    }
  }
}

/** A space's input: its `sessions` folder, or its `sources` (the first one also named as `sessionsDir`). */
function resolveSessions(
  space: SpaceConfig,
  index: number,
  base: string,
  origin: string,
): Pick<Space, 'sessionsDir' | 'format' | 'sources'> {
  if (space.sources === undefined) {
    if (space.sessions === undefined) {
      throw new ConfigError(
        `${origin}: spaces.${index} has neither "sessions" nor "sources"; name the folder of its transcripts`,
        `spaces.${index}.sessions`,
      );
    }
    return { sessionsDir: resolvePath(space.sessions, base), format: space.format };
  }
  if (space.sessions !== undefined) {
    throw new ConfigError(
      `${origin}: spaces.${index} has both "sessions" and "sources"; list the sessions folder as one of its sources`,
      `spaces.${index}.sources`,
    );
  }
  const sources: SessionSource[] = space.sources.map((source) => ({
    format: source.format,
    sessionsDir: resolvePath(source.path, base),
    ...(source.cwd === undefined ? {} : { repository: resolvePath(source.cwd, base) }),
  }));
  const first = sources[0]!;
  return { sessionsDir: first.sessionsDir, format: first.format, sources };
}

/**
 * The agents' homes as the agents find them: Claude Code reads `CLAUDE_CONFIG_DIR`, else `~/.claude`; Codex
 * reads `CODEX_HOME` (canonicalised), else `~/.codex`.
 */
function resolveDiscover(
  discover: DiscoverConfig,
  env: Readonly<Record<string, string | undefined>>,
  base: string,
): DiscoverSettings {
  const options = Array.isArray(discover)
    ? { agents: discover, agentsMd: false, owners: undefined }
    : discover;
  const home = (variable: string, fallback: string): string => {
    const value = env[variable];
    if (value === undefined || value === '') return resolvePath(fallback, homedir());
    const path = resolvePath(value, homedir());
    try {
      return realpathSync(path);
    } catch {
      return path; // a home that does not exist is reported by `dreamd discover`
    }
  };
  return {
    agents: [...new Set(options.agents)],
    agentsMd: options.agentsMd,
    claudeHome: home('CLAUDE_CONFIG_DIR', '~/.claude'),
    codexHome: home('CODEX_HOME', '~/.codex'),
    ...(options.owners === undefined
      ? {}
      : {
          owners: Object.fromEntries(
            Object.entries(options.owners).map(([folder, root]) => [
              folder,
              realOrSelf(resolvePath(root, base)),
            ]),
          ),
        }),
  };
}

/** A path with its links resolved, as discovery names repositories; the path itself when it does not exist. */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The SDKs' own base-URL variables, as every proxy, gateway and Claude tool sets them: `ANTHROPIC_BASE_URL`
 * (provider anthropic) or `OPENAI_BASE_URL` (openai-compatible) apply when neither the file nor
 * DREAMD_MODEL_BASE_URL sets `model.baseUrl`. A value that is not a URL is a ConfigError naming the variable.
 */
function applySdkBaseUrl(
  raw: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): void {
  const model = raw.model as { provider?: unknown; baseUrl?: unknown } | undefined;
  if (model?.baseUrl !== undefined) return;
  const variable = model?.provider === 'openai-compatible' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL';
  const value = env[variable]?.trim();
  if (value === undefined || value === '') return;
  if (!HttpUrl.safeParse(value).success) {
    throw new ConfigError(
      `${variable}=${value} is not a URL; set it to the endpoint (e.g. https://gateway.example/anthropic) or unset it`,
      'model.baseUrl',
    );
  }
  setPath(raw, 'model.baseUrl', value);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export { CONFIG_FILE_NAMES, findConfigFile } from './config-file.js';
