/**
 * Where the daemon's HTTP API listens unless `server.host`/`server.port` or DREAMD_HOST/DREAMD_PORT say
 * otherwise: loopback, so nothing off the machine reaches it without a token. Apart from the schema so
 * `dreamd start --help` can name the address without loading zod.
 */
export const DEFAULT_SERVER_HOST = '127.0.0.1';
export const DEFAULT_SERVER_PORT = 7077;

/** `host:port` the environment gives (DREAMD_HOST, DREAMD_PORT), else the defaults; the config file aside. */
export function serverAddressFromEnvironment(env: Readonly<Record<string, string | undefined>>): string {
  const host =
    env.DREAMD_HOST === undefined || env.DREAMD_HOST === '' ? DEFAULT_SERVER_HOST : env.DREAMD_HOST;
  const port =
    env.DREAMD_PORT === undefined || env.DREAMD_PORT === '' ? DEFAULT_SERVER_PORT : env.DREAMD_PORT;
  return `${host}:${port}`;
}
