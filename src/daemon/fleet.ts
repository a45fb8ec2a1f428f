import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errorMessage } from '../errors.js';

/**
 * The daemons sharing one Redis and key prefix, each with the spaces it serves, in one hash
 * (`<prefix>:daemons`, a field per process). A daemon announces itself at start and every `refreshMs`, and
 * leaves at stop; an entry not refreshed for `staleMs` is a process that died and is dropped.
 *
 * Why: jobs of every space go through one queue per prefix. A daemon whose config lacks a space hands that
 * space's jobs back (daemon/consolidation-processor.ts), so nothing fails, but each such job waits; two
 * configurations that share a prefix but not their spaces are almost always a mistake, and the fix (a prefix per
 * configuration) is one setting. So they are warned about at start, naming the other process and the fix.
 *
 * States: created → announced (refreshing) → left.
 */
export interface Fleet {
  /** Writes this daemon's entry and returns the other live daemons whose spaces differ from ours. */
  announce(): Promise<FleetMember[]>;
  /** Removes this daemon's entry and stops refreshing it. */
  leave(): Promise<void>;
}

export const FleetMember = z.object({
  member: z.string(),
  host: z.string(),
  pid: z.number(),
  spaces: z.array(z.string()),
  seenAt: z.number(),
});
export type FleetMember = z.infer<typeof FleetMember>;

/** The few hash commands the registry needs; an ioredis client has them. */
export interface FleetStore {
  hset(key: string, field: string, value: string): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, ...fields: string[]): Promise<unknown>;
}

export interface CreateFleetOptions {
  readonly store: () => Promise<FleetStore>;
  /** Called once the entry is removed (or removing it failed): close the store's connection. */
  readonly onLeft?: () => void;
  readonly prefix: string;
  /** The spaces this daemon serves now (read at every announce, so a reload is reflected). */
  readonly spaces: () => readonly string[];
  readonly logger: Logger;
  readonly now?: () => number;
  /** Default 30 s. */
  readonly refreshMs?: number;
  /** Default 120 s: four refreshes missed. */
  readonly staleMs?: number;
}

function sameSpaces(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\0') === [...b].sort().join('\0');
}

export function createFleet(options: CreateFleetOptions): Fleet {
  const now = options.now ?? Date.now;
  const refreshMs = options.refreshMs ?? 30_000;
  const staleMs = options.staleMs ?? 120_000;
  const key = `${options.prefix}:daemons`;
  const member = `${hostname()}:${process.pid}:${now()}`;
  const warned = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let left = false;

  const announce = async (): Promise<FleetMember[]> => {
    const store = await options.store();
    const ours: FleetMember = {
      member,
      host: hostname(),
      pid: process.pid,
      spaces: [...options.spaces()],
      seenAt: now(),
    };
    await store.hset(key, member, JSON.stringify(ours));
    const entries = await store.hgetall(key);
    const different: FleetMember[] = [];
    const stale: string[] = [];
    for (const [field, value] of Object.entries(entries)) {
      if (field === member) continue;
      let parsed: FleetMember;
      try {
        parsed = FleetMember.parse(JSON.parse(value));
      } catch {
        stale.push(field); // not ours to read: an entry of another version, dropped
        continue;
      }
      if (now() - parsed.seenAt > staleMs) stale.push(field);
      else if (!sameSpaces(parsed.spaces, ours.spaces)) different.push(parsed);
    }
    if (stale.length > 0) await store.hdel(key, ...stale);
    for (const other of different) {
      if (warned.has(other.member)) continue;
      warned.add(other.member);
      const theirs = new Set(other.spaces);
      const mine = new Set(ours.spaces);
      options.logger.warn(
        {
          other: `${other.host} pid ${other.pid}`,
          onlyTheirs: other.spaces.filter((space) => !mine.has(space)),
          onlyOurs: ours.spaces.filter((space) => !theirs.has(space)),
          prefix: options.prefix,
        },
        "another dreamd on this Redis and key prefix serves other spaces: each daemon hands the other's jobs " +
          'back, so they wait; give each configuration its own redisPrefix (DREAMD_REDIS_PREFIX)',
      );
    }
    return different;
  };

  const schedule = (): void => {
    if (left) return;
    timer = setTimeout(() => {
      announce()
        .catch((error: unknown) =>
          options.logger.debug({ error: errorMessage(error) }, 'could not refresh this daemon in the fleet'),
        )
        .finally(schedule);
    }, refreshMs);
    timer.unref();
  };

  return {
    async announce() {
      const different = await announce();
      if (timer === undefined) schedule();
      return different;
    },
    async leave() {
      left = true;
      if (timer !== undefined) clearTimeout(timer);
      try {
        await (await options.store()).hdel(key, member);
      } catch (error) {
        options.logger.debug({ error: errorMessage(error) }, 'could not remove this daemon from the fleet');
      }
      options.onLeft?.();
    },
  };
}
