import { Command, CommanderError, type HelpConfiguration, type Option } from 'commander';
import type * as ConfigLoader from '../config/load.js';
import type * as ScheduleCheck from '../config/schedule.js';
import type { Config } from '../config/schema.js';
import type { DiscoveredSpaces } from '../discovery/index.js';
import { CommandExit, ExitCode, reportError, reportUsageError, type CliIo } from './output.js';
import { packageVersion } from './version.js';

/** What every command's action receives: the IO, the global flags and a lazy config loader. */
export interface CommandContext {
  readonly io: CliIo;
  readonly json: boolean;
  /**
   * Loads the config once (from --config, DREAMD_CONFIG, else the nearest dreamd.config.json, .yaml or .yml
   * in the working directory or a folder above it).
   */
  readonly config: () => Config;
  /** The spaces `discover` finds (one per repository); none without `discover`. Discovers once per command. */
  readonly discovery: () => Promise<DiscoveredSpaces>;
  /**
   * The config with the spaces `discover` finds after the configured ones; the config itself without
   * `discover`. Discovers once per command (the same discovery as `discovery`).
   */
  readonly discoveredConfig: () => Promise<Config>;
}

export type CommandRegistrar = (program: Command, context: () => CommandContext) => void;

/**
 * One top-level command in the table of the CLI. Its module is loaded only when the command runs (or its help
 * is asked for): `dreamd --help` lists the table's lines and `--version` loads no command at all.
 */
export interface CommandEntry {
  /** The command and its arguments as `dreamd --help` lists them: `consolidate [space]`. */
  readonly usage: string;
  /** Its line in `dreamd --help`: the description the module gives the command (a test keeps them equal). */
  readonly summary: string;
  /** Loads the module that registers it (a module may register several top-level commands). */
  readonly load: () => Promise<CommandRegistrar>;
}

/**
 * How every help is written: with dreamd's own options (--config, --json, --version) as the global ones. A
 * parent command's options are not a subcommand's (`history --limit` does nothing for `history show`), so
 * commander's default, every ancestor's options, would list them where they do not apply.
 */
const HELP = {
  showGlobalOptions: true,
  visibleGlobalOptions(command: Command): Option[] {
    let root = command;
    while (root.parent !== null) root = root.parent;
    return root === command ? [] : root.options.filter((option) => !option.hidden);
  },
} satisfies HelpConfiguration;

/** The name of an entry's command: the first word of its usage. */
export function entryName(entry: CommandEntry): string {
  return entry.usage.split(' ')[0]!;
}

/** The command word of a command line (`dreamd --json help memory show` → `memory`), if any. */
export function commandWord(argv: readonly string[]): string | undefined {
  const words = argv.filter((word, index) => !word.startsWith('-') && argv[index - 1] !== '--config');
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * Builds the commander program with global flags and registers the commands: the module of the command named
 * on the line, or, when none is (`--help`, `--version`, an unknown word), each entry's usage and summary
 * without loading any module. Errors thrown by an action are reported once, as text or JSON, and become the
 * exit code (1 failure, 2 usage/config).
 */
export async function runProgram(
  argv: readonly string[],
  io: CliIo,
  commands: readonly CommandEntry[],
): Promise<ExitCode> {
  // Under --json a usage error is reported as JSON on stdout (below), so commander's text is held back.
  const json = argv.includes('--json');
  const writeErr = (text: string) => {
    if (!json) io.stderr(text);
  };
  const program = new Command('dreamd')
    .description('Memory consolidation for LLM agents: transcripts in, curated memory out.')
    .option(
      '--config <path>',
      'config file (default: $DREAMD_CONFIG, else the nearest dreamd.config.json, .yaml or .yml here or above)',
    )
    .option('--json', 'machine-readable output', false)
    .version(packageVersion(), '-V, --version', 'print the version of dreamd')
    .showHelpAfterError()
    .exitOverride()
    .configureHelp(HELP)
    .configureOutput({ writeOut: io.stdout, writeErr });
  // The config loader (zod and the schema) is loaded when a command runs, not for --help or --version.
  let configModule: typeof ConfigLoader | undefined;
  let scheduleModule: typeof ScheduleCheck | undefined;
  program.hook('preAction', async () => {
    // In parallel: node-cron (behind the schedule check) takes about as long to load as the config loader.
    [configModule, scheduleModule] = await Promise.all([
      configModule ?? import('../config/load.js'),
      scheduleModule ?? import('../config/schedule.js'),
    ]);
  });

  let loaded: Config | undefined;
  let discovery: Promise<DiscoveredSpaces> | undefined;
  const context = (): CommandContext => {
    const flags = program.opts<{ config?: string; json: boolean }>();
    const config = (): Config => {
      if (configModule === undefined) throw new Error('the config loader is loaded before an action runs');
      if (loaded !== undefined) return loaded;
      const config = configModule.loadConfig({ path: flags.config, env: io.env, cwd: io.cwd });
      // What `dreamd start` would refuse, every command refuses: a schedule node-cron cannot read.
      scheduleModule?.checkSchedule(config, io.env);
      return (loaded = config);
    };
    const discover = (): Promise<DiscoveredSpaces> => {
      const base = config();
      discovery ??= import('../discovery/index.js').then(({ discoverSpaces }) => discoverSpaces(base));
      return discovery;
    };
    return {
      io,
      json: flags.json,
      config,
      discovery: discover,
      discoveredConfig: async () => {
        const base = config();
        if (base.discover === undefined) return base;
        const [{ configWithSpaces }, found] = await Promise.all([
          import('../discovery/index.js'),
          discover(),
        ]);
        return configWithSpaces(base, found);
      },
    };
  };
  const word = commandWord(argv);
  const named = commands.find((entry) => entryName(entry) === word);
  if (named !== undefined) (await named.load())(program, context);
  else for (const entry of commands) program.command(entry.usage).description(entry.summary);
  program.commands.forEach((command) => {
    command.exitOverride();
    command.configureHelp(HELP);
    command.configureOutput({ writeOut: io.stdout, writeErr });
    command.commands.forEach((sub) => {
      sub.exitOverride();
      sub.configureHelp(HELP);
      sub.configureOutput({ writeOut: io.stdout, writeErr });
    });
  });

  try {
    await program.parseAsync(['node', 'dreamd', ...argv]);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.exitCode === 0
      ) {
        return ExitCode.ok;
      }
      if (json) reportUsageError(io, commandName(program, argv), error);
      return ExitCode.usage;
    }
    if (error instanceof CommandExit) return error.code;
    return reportError(io, program.opts<{ json: boolean }>().json, error, commandName(program, argv));
  }
}

/** The command a run is for (`memory show`), for the JSON envelope; `dreamd` when none was recognised. */
export function commandName(program: Command, argv: readonly string[]): string {
  // Words that are not flags, nor the value of --config.
  const words = argv.filter((word, index) => !word.startsWith('-') && argv[index - 1] !== '--config');
  const top = program.commands.find((command) => command.name() === words[0]);
  if (top === undefined) return 'dreamd';
  const sub = top.commands.find((command) => command.name() === words[1]);
  return sub === undefined ? top.name() : `${top.name()} ${sub.name()}`;
}
