import cron from 'node-cron';
import type { Config } from './schema.js';
import { ConfigError } from '../errors.js';

/**
 * Checks `schedule` with node-cron, the parser the scheduler uses, so every command refuses the schedule
 * `dreamd start` would refuse. Apart from the schema so that loading a config (the agent kit does) does not
 * load node-cron. The error names where the schedule was set: DREAMD_SCHEDULE, else the config file.
 */
export function checkSchedule(
  config: Pick<Config, 'schedule' | 'source'>,
  env: Readonly<Record<string, string | undefined>> = {},
): void {
  if (cron.validate(config.schedule)) return;
  const where =
    env.DREAMD_SCHEDULE !== undefined && env.DREAMD_SCHEDULE !== ''
      ? 'DREAMD_SCHEDULE'
      : (config.source ?? 'the default config');
  throw new ConfigError(
    `${where}: schedule "${config.schedule}" is not a valid cron expression ` +
      '(five fields: minute hour day month weekday, e.g. "*/10 * * * *")',
    'schedule',
  );
}
