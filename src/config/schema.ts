import { z } from 'zod';
import { DEFAULT_SERVER_HOST, DEFAULT_SERVER_PORT } from './server-address.js';

/**
 * dreamd.config.json, as the README's configuration table describes it. Every setting also has an environment variable
 * (see `config/load.ts`). Units are in the names or the comments; defaults are the product's.
 */

export const SpaceId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a space id is 1–64 letters, digits, ".", "_" or "-"');

export const TranscriptFormat = z.enum(['native', 'claude-code', 'codex']);
export type TranscriptFormat = z.infer<typeof TranscriptFormat>;

/**
 * How dreamd writes a space's memory folder: `topics` (one file per fact type, `user.md` …) or `claude-code`
 * (one file per fact, named and shaped as Claude Code writes its own memories). The table of layouts is
 * `LAYOUTS` in `memory/layouts.ts`.
 */
export const MemoryLayout = z.enum(['topics', 'claude-code']);
export type MemoryLayout = z.infer<typeof MemoryLayout>;

/**
 * One source of a space's transcripts: a folder of one format. A space with several sources reads them all
 * into one ledger, one gate count and one fact set.
 */
export const TranscriptSourceConfig = z.strictObject({
  format: TranscriptFormat,
  /** The folder of its transcripts (`~` expanded; relative paths resolve against the config file). */
  path: z.string().min(1),
  /**
   * Only the transcripts whose working directory lies in the repository of this folder (its main worktree's
   * root; the folder itself outside git). For a shared folder of many repositories' sessions: Codex's.
   */
  cwd: z.string().min(1).optional(),
});
export type TranscriptSourceConfig = z.infer<typeof TranscriptSourceConfig>;

export const SpaceConfig = z.strictObject({
  id: SpaceId,
  /**
   * Directory of session transcripts (input). `~` is expanded; relative paths resolve against the config file.
   * Required unless `sources` is given.
   */
  sessions: z.string().min(1).optional(),
  /** Several transcript folders, of any formats, read as one space's input (instead of `sessions`). */
  sources: z.array(TranscriptSourceConfig).min(1).optional(),
  /** Memory directory (output). */
  memory: z.string().min(1),
  /**
   * `native` (one JSON file a session), `claude-code` (Claude Code's *.jsonl) or `codex` (OpenAI Codex CLI's
   * rollout-*.jsonl, in its YYYY/MM/DD folders). Default `native`.
   */
  format: TranscriptFormat.default('native'),
  /** How memory is written. Default `claude-code` for a `claude-code` space, `topics` otherwise. */
  layout: MemoryLayout.optional(),
  /**
   * A repository's `AGENTS.md` (`~` expanded; relative paths resolve against the config file): every run of the
   * space also writes dreamd's marked block there, the project and feedback facts a coding agent needs.
   */
  agentsMd: z
    .string()
    .regex(
      /(?:^|[\\/])AGENTS\.md$/,
      'must be the path of a file named AGENTS.md (for example "../AGENTS.md")',
    )
    .optional(),
  /** The most bytes dreamd's block of `agentsMd` takes, its two marker lines included. Default 8192. */
  agentsMdBudget: z.number().int().min(256).max(100_000).optional(),
  /**
   * Approval mode: a run stages its proposal (`.dreamd/proposals/<run>/`) and writes nothing into the memory
   * folder until a person accepts or rejects it (`dreamd proposals`, `accept`, `reject`, the daemon's page).
   * `"shared"`: only a run that changes the team's file (`agentsMd`) waits for a decision; the others write.
   * Default false.
   */
  approve: z.union([z.boolean(), z.literal('shared')]).optional(),
});

/** The coding agents whose homes `discover` searches. */
export const DiscoverAgent = z.enum(['claude-code', 'codex']);
export type DiscoverAgent = z.infer<typeof DiscoverAgent>;

/**
 * `discover`: find every repository the agents worked in and keep one space per repository, with every
 * agent's sessions as its sources and Claude Code's memory folder of that repository as its memory. Either the
 * list of agents, or an object with the options.
 */
export const DiscoverConfig = z.union([
  z.array(DiscoverAgent).min(1),
  z.strictObject({
    agents: z.array(DiscoverAgent).min(1),
    /** Also keep dreamd's block of each repository's `AGENTS.md` (a tracked file). Default false. */
    agentsMd: z.boolean().default(false),
    /**
     * Who owns a Claude Code project folder that several repositories' paths encode to (`/x/a-b` and `/x/a_b`
     * are both `-x-a-b`): the folder's name under `projects/` → the repository root (absolute or `~/`) whose
     * memory it holds. Without an entry dreamd writes nothing into such a folder.
     */
    owners: z.record(z.string().min(1), z.string().min(1)).optional(),
  }),
]);
export type DiscoverConfig = z.infer<typeof DiscoverConfig>;

/** The layout a space's consolidations write: its `layout`, else the default of its format. */
export function layoutOfSpace(space: {
  readonly format: TranscriptFormat;
  readonly layout?: MemoryLayout | undefined;
}): MemoryLayout {
  return space.layout ?? (space.format === 'claude-code' ? 'claude-code' : 'topics');
}
export type SpaceConfig = z.infer<typeof SpaceConfig>;

/** `model.price` in dreamd.config.json: the price of a model the table does not know (a local one: zeros). */
export const ModelPriceConfig = z.strictObject({
  /** USD per million uncached input tokens. */
  inputPerMTok: z.number().min(0),
  /** USD per million output tokens. */
  outputPerMTok: z.number().min(0),
  /** USD per million tokens written to the cache. Default 1.25 × input. */
  cacheWritePerMTok: z.number().min(0).optional(),
  /** USD per million tokens read from the cache. Default 0.1 × input. */
  cacheReadPerMTok: z.number().min(0).optional(),
  /** Fraction of the price paid in batch mode. Default 0.5. */
  batchFactor: z.number().min(0).max(1).optional(),
});
export type ModelPriceConfig = z.infer<typeof ModelPriceConfig>;

/**
 * An http:// or https:// URL with a host. `z.url()` alone takes `htp:/oops` (any scheme, one slash); an
 * endpoint the SDKs can call needs both.
 */
export const HttpUrl = z.url({
  protocol: /^https?$/,
  error: 'an http:// or https:// URL with a host (e.g. http://127.0.0.1:11434/v1)',
});

export const ModelConfig = z.strictObject({
  /** `anthropic` (Messages API) or `openai-compatible` (Ollama, vLLM, LM Studio, …). */
  provider: z.enum(['anthropic', 'openai-compatible']).default('anthropic'),
  /** Model name. Default the current Haiku. */
  name: z.string().min(1).default('claude-haiku-5-5'),
  /** Base URL of the API. Default: the provider's own (Anthropic) — required for openai-compatible. */
  baseUrl: HttpUrl.optional(),
  /** API key. Better set through ANTHROPIC_API_KEY / OPENAI_API_KEY / DREAMD_MODEL_API_KEY than in the file. */
  apiKey: z.string().min(1).optional(),
  /** Longest answer the model may give, in tokens. */
  maxOutputTokens: z.int().positive().default(4096),
  /** Per-request timeout in milliseconds. 60 s: a Haiku extraction of a full batch takes 5–20 s. */
  timeoutMs: z.int().positive().default(60_000),
  /** Retries of a retryable failure (429, 529, 5xx, timeout, dropped connection, bad output). */
  maxRetries: z.int().min(0).max(10).default(4),
  /**
   * Most calls in flight at once on one key (endpoint and API key), across every run of the process: the
   * extraction calls of a run that do not depend on each other go in parallel up to this many. A `retry-after`
   * pauses all of the key's calls; rate-limit headers pace them. 1: one call after another.
   */
  concurrency: z.int().min(1).max(64).default(4),
  /**
   * Price of a model dreamd's table does not know (USD per million tokens), for run costs and the monthly
   * budget. The table knows claude-haiku-5-5 and claude-haiku-4-5; this overrides it when set.
   */
  price: ModelPriceConfig.optional(),
  /**
   * How much effort (adaptive thinking) an extraction call may spend, on Claude models that take it
   * (`output_config.effort`: the 4.5 Opus and every 5.x model). Default `low`: picking facts out of a digest
   * gains little from long thinking, and thinking is paid as output tokens (5 × the input price). `null`
   * leaves it to the model (its default, medium).
   */
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullable().default('low'),
  /**
   * When a run sends its independent extraction calls as a message batch (Anthropic's Message Batches API:
   * half price, results usually within minutes, always within 24 hours): `scheduled` (default) for the
   * scheduler's runs only, `always`, or `never`. `dreamd consolidate --batch` batches one manual run. A
   * provider without a batch API (openai-compatible) calls synchronously whatever this says.
   */
  batch: z.enum(['scheduled', 'always', 'never']).default('scheduled'),
  /**
   * Seconds before the first look at a submitted batch; each next look waits twice as long, up to 15 minutes.
   * Default 60.
   */
  batchPollSeconds: z.number().positive().max(900).default(60),
});
export type ModelConfig = z.infer<typeof ModelConfig>;

export const EmbeddingsConfig = z.strictObject({
  /** Base URL of an OpenAI-compatible API serving `/embeddings`. */
  baseUrl: HttpUrl,
  model: z.string().min(1),
  apiKey: z.string().min(1).optional(),
});
export type EmbeddingsConfig = z.infer<typeof EmbeddingsConfig>;

/** The agent side (`dreamd chat`, `createMemoryAgent`): how memory is loaded and the history kept small. */
export const ChatConfig = z.strictObject({
  /** Context window of the chat model, in tokens. Default: 200,000 for `claude-*` models, else 8,192. */
  contextWindow: z.int().positive().optional(),
  /** Share of the context window at which older turns are summarised. Default 0.8 (80 %). */
  compactAt: z.number().gt(0).max(1).default(0.8),
  /** Characters of one message the summariser sees; longer messages are cut. Default 500. */
  summaryMessageChars: z.int().positive().default(500),
  /** Summarise older turns (rolling summary); false drops them (sliding window only). Default true. */
  summarise: z.boolean().default(true),
  /**
   * A smaller model that writes the rolling summary, on the same provider and endpoint as `model` (say
   * `claude-haiku-5-5` beside a larger chat model, or a small local model). Default: the chat model itself.
   */
  summaryModel: z.string().min(1).optional(),
  /**
   * When the `recall` tool finds nothing, or only weak matches, without an embeddings endpoint: have the model
   * (`summaryModel`, else the chat model) rewrite the query once into key words, synonyms and the memory's
   * languages, and search again. One small call, counted in the chat's usage. Default true.
   */
  recallRewrite: z.boolean().default(true),
  /** Tokens of facts retrieved for each user message and added to the system prompt. Default 2,000. */
  retrievalTokens: z.int().min(0).default(2_000),
  /** Language of the conversation, a key of `charsPerToken`. Default `en`. */
  language: z.string().min(1).default('en'),
  /** Characters per token by language for estimates where the provider has no counting endpoint. */
  charsPerToken: z.record(z.string(), z.number().positive()).default({ en: 3.5, pt: 4.0 }),
});
export type ChatConfig = z.infer<typeof ChatConfig>;

export const GatesConfig = z.strictObject({
  /** Hours since the last successful run before the next may start. */
  minHours: z.number().min(0).default(24),
  /** Settled new sessions needed before a run starts. */
  minSessions: z.int().min(1).default(5),
  /** A session without `endedAt` is settled once its file has not changed for this many minutes. */
  quietMinutes: z.number().min(0).default(30),
});
export type GatesConfig = z.infer<typeof GatesConfig>;

export const LimitsConfig = z.strictObject({
  /** Largest transcript read, in bytes (64 MiB). Bigger files are reported and set aside. */
  maxSessionBytes: z
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /**
   * Token budget of one model call's input besides the fixed instructions: digest and current-memory list
   * together. Small sessions share a call; long ones are split.
   */
  digestTokensPerCall: z.int().positive().default(24_000),
  /**
   * Most tokens of current-memory list one call carries, taken out of `digestTokensPerCall`. A call shows
   * 200 tokens plus 15 % of its digest's tokens of relevant and recent facts; a run of several calls adds a
   * stable part cached with the instructions (about 3,400 tokens when memory is large). Default 4,000.
   */
  memoryTokensPerCall: z.int().min(0).default(4_000),
  /** Most model calls one run may make; the rest of the sessions wait for the next run. */
  maxCallsPerRun: z.int().positive().default(20),
  /**
   * Longest fact kept, in characters of title, body, why and how-to-apply together (default 4,000: a fact is
   * one to three sentences; at most 100,000, far under the 4 MiB a topic file may reach). A longer fact is
   * dropped and counted in the run record (`factsDropped['fact-too-large']`).
   */
  maxFactChars: z.int().positive().max(100_000).default(4_000),
  /** Most facts kept of one model answer (default 100); the rest are dropped and counted. */
  maxFactsPerAnswer: z.int().positive().max(10_000).default(100),
  /**
   * Most facts kept per session in one run, over all the calls that carried it (default 200); the rest are
   * dropped and counted.
   */
  maxFactsPerSession: z.int().positive().max(100_000).default(200),
  /**
   * Longest answer text accepted from the model, in characters (default 1,000,000, far above what
   * `model.maxOutputTokens` allows a well-behaved model). A longer answer is dropped unread, and the sessions
   * of its call wait for the next run.
   */
  maxAnswerChars: z.int().positive().default(1_000_000),
  /** Characters kept of one tool result in the digest. */
  toolResultChars: z.int().min(0).default(200),
  /**
   * Minutes without a heartbeat after which a space's lock is stale and may be taken over. The holder renews
   * it every 30 s (every quarter of this when shorter) for as long as it runs, model calls included, so a
   * long run keeps its lock; only a holder that stopped (crashed on another host, paused) loses it.
   */
  lockStaleMinutes: z.number().positive().default(10),
  /**
   * Dollars a space may spend on model calls in one calendar month (UTC). When its runs have recorded that
   * much, runs wait (skipped, with the reason) until the month ends. Unset: no budget.
   */
  monthlyBudgetUsd: z.number().positive().optional(),
});
export type LimitsConfig = z.infer<typeof LimitsConfig>;

export const HistoryConfig = z.strictObject({
  /**
   * Run records kept in `.dreamd/runs/` (each holds the old bytes of the files its run changed, for
   * rollback); older ones are deleted when a run commits, and can no longer be shown or rolled back. The
   * newest completed consolidation is always kept. Default 200.
   */
  keepRuns: z.int().positive().default(200),
});
export type HistoryConfig = z.infer<typeof HistoryConfig>;

/**
 * Curation (`consolidation/curation/curate.ts`): when a type's active facts pass a budget, or several say the same thing
 * in other words, one model call per such type rewrites that set into fewer facts; the facts they replace
 * move to the archive (`.dreamd/archive.json`). A run under budget with no near-duplicates makes no call.
 */
export const CurationConfig = z.strictObject({
  /** false: never curate (facts still leave the active files for the archive when superseded). */
  enabled: z.boolean().default(true),
  /** Active facts of dreamd's of one type (in the `topics` layout: one file) above which the type is curated. */
  maxFactsPerType: z.int().positive().default(60),
  /** UTF-8 bytes of their title, body, why and how to apply above which the type is curated. Default 24 KiB. */
  maxBytesPerType: z.int().positive().default(24_576),
  /**
   * Near-duplicates: this many active facts of one type, each alike another (word and word-pair similarity at
   * least `duplicateSimilarity`, same names and numbers), make the type curated even under budget.
   */
  duplicateGroup: z.int().min(2).default(3),
  duplicateSimilarity: z.number().min(0).max(1).default(0.45),
  /** Most facts one curation call sees (the newest); the rest wait for a later run. */
  maxFactsPerCall: z.int().min(2).default(150),
});
export type CurationConfig = z.infer<typeof CurationConfig>;

/**
 * Sessions kept out of memory besides those a person marks (`dreamd sessions exclude`, or `#dreamd:ignore`
 * typed in the session, always honoured).
 */
export const KeepOutConfig = z.strictObject({
  /**
   * true: a session in which the agent used a web or MCP tool (Anthropic's server tools such as `web_search`
   * and `web_fetch`, Claude Code's `WebFetch` and `WebSearch`, any `mcp__` tool, Codex's web search) is
   * never learned from, as Codex's `memories.disable_on_external_context` does. Default false: most coding
   * sessions read documentation or an issue tracker, and what the person said in them is worth keeping; the
   * screen already holds back an instruction that came from a tool's output.
   */
  externalContext: z.boolean().default(false),
});
export type KeepOutConfig = z.infer<typeof KeepOutConfig>;

export const ServerConfig = z.strictObject({
  host: z.string().default(DEFAULT_SERVER_HOST),
  port: z.int().min(0).max(65535).default(DEFAULT_SERVER_PORT),
  /**
   * Bearer token for every route but /healthz, on any host (loopback included) once set; required when `host` is
   * not loopback. Prefer DREAMD_API_TOKEN.
   */
  apiToken: z.string().min(16).optional(),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

export const WorkersConfig = z.strictObject({
  /** Jobs one worker process runs at once (each on a different space). */
  concurrency: z.int().min(1).max(256).default(2),
  /** Attempts of a job before it fails for good. */
  attempts: z.int().min(1).default(5),
  /** First retry delay in ms; doubles each attempt, with jitter. */
  backoffMs: z.int().min(0).default(5_000),
});
export type WorkersConfig = z.infer<typeof WorkersConfig>;

export const ConfigFile = z.strictObject({
  $schema: z.string().optional(),
  /**
   * Redis to share jobs through (BullMQ), for workers on several processes or machines. Unset: `dreamd start`
   * runs scheduler, workers and API in one process on the embedded queue; `worker` and `scheduler` need it.
   */
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
    .optional(),
  /** Key prefix in Redis, so several deployments can share one server. */
  redisPrefix: z.string().min(1).default('dreamd'),
  model: ModelConfig.default(ModelConfig.parse({})),
  embeddings: EmbeddingsConfig.optional(),
  chat: ChatConfig.default(ChatConfig.parse({})),
  /** node-cron expression of the scheduler tick. Default every 10 minutes. */
  schedule: z.string().min(1).default('*/10 * * * *'),
  gates: GatesConfig.default(GatesConfig.parse({})),
  limits: LimitsConfig.default(LimitsConfig.parse({})),
  history: HistoryConfig.default(HistoryConfig.parse({})),
  curation: CurationConfig.default(CurationConfig.parse({})),
  keepOut: KeepOutConfig.default(KeepOutConfig.parse({})),
  server: ServerConfig.default(ServerConfig.parse({})),
  workers: WorkersConfig.default(WorkersConfig.parse({})),
  /**
   * Directory for daemon state. Default `./.dreamd-state`. Accepted for configs written for earlier versions;
   * nothing writes there now (memory state lives under each memory folder's `.dreamd/`).
   */
  stateDir: z.string().optional(),
  spaces: z.array(SpaceConfig).optional(),
  discover: DiscoverConfig.optional(),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

/**
 * One folder of a space's transcripts, with an absolute path. `repository` keeps only the transcripts whose
 * working directory resolves to that repository root; `files` (paths under `sessionsDir`) keeps only those.
 */
export interface SessionSource {
  readonly format: TranscriptFormat;
  readonly sessionsDir: string;
  readonly repository?: string | undefined;
  readonly files?: readonly string[] | undefined;
}

/** A space with absolute paths, as the rest of dreamd sees it. */
export interface Space {
  readonly id: string;
  /** The sessions folder; with `sources`, the first source's (shown, and checked to be readable). */
  readonly sessionsDir: string;
  readonly memoryDir: string;
  /** The format of `sessionsDir`. */
  readonly format: TranscriptFormat;
  /**
   * Several transcript folders read as one input. Set: every file of the space is named by its absolute path in
   * the ledger and the scan. Absent: the one folder `sessionsDir`, files named relative to it.
   */
  readonly sources?: readonly SessionSource[] | undefined;
  /** The repository root a discovered space serves (`discover`); absent for a configured space. */
  readonly repository?: string | undefined;
  /** How consolidations write its memory; absent: the default of its format (see {@link layoutOfSpace}). */
  readonly layout?: MemoryLayout | undefined;
  /** Absolute path of the `AGENTS.md` whose dreamd block every run also writes; absent: none. */
  readonly agentsMd?: string | undefined;
  /** Byte budget of that block (markers included); absent: the default. */
  readonly agentsMdBudget?: number | undefined;
  /** Approval mode: runs propose, a person accepts or rejects (see `SpaceConfig.approve`); absent: off. */
  readonly approve?: boolean | 'shared' | undefined;
}

/** The parsed, resolved configuration. */
export interface Config {
  /** Where the config came from (a file path), or undefined when defaults were used. */
  readonly source: string | undefined;
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string;
  readonly model: ModelConfig;
  readonly embeddings: EmbeddingsConfig | undefined;
  /** The agent side's settings; absent in configs built by hand, which then get the defaults. */
  readonly chat?: ChatConfig;
  readonly schedule: string;
  readonly gates: GatesConfig;
  readonly limits: LimitsConfig;
  /** Run history retention; absent: the defaults (`HistoryConfig.parse({})`). */
  readonly history?: HistoryConfig | undefined;
  /** Curation budgets; absent: the defaults (`CurationConfig.parse({})`). */
  readonly curation?: CurationConfig | undefined;
  /** Which sessions are kept out besides those marked; absent: the defaults (`KeepOutConfig.parse({})`). */
  readonly keepOut?: KeepOutConfig | undefined;
  readonly server: ServerConfig;
  readonly workers: WorkersConfig;
  readonly stateDir: string;
  readonly spaces: readonly Space[];
  /** `discover`, resolved: which agents' homes to search and where they are; absent: no discovery. */
  readonly discover?: DiscoverSettings | undefined;
}

/** The `discover` setting with the agents' homes found as the agents find them (see `config/load.ts`). */
export interface DiscoverSettings {
  readonly agents: readonly DiscoverAgent[];
  /** Keep dreamd's block of each discovered repository's `AGENTS.md`. */
  readonly agentsMd: boolean;
  /** Claude Code project folder name → the repository root (absolute) that owns it (`discover.owners`). */
  readonly owners?: Readonly<Record<string, string>> | undefined;
  /** Claude Code's home: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
  readonly claudeHome: string;
  /** Codex's home: `CODEX_HOME`, else `~/.codex`. */
  readonly codexHome: string;
}

/** The config's `keepOut` settings, defaulted for a config built by hand. */
export function keepOutSettings(config: Pick<Config, 'keepOut'>): KeepOutConfig {
  return config.keepOut ?? KeepOutConfig.parse({});
}
