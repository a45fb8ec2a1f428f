import { describe, expect, it } from 'vitest';
import { bullmqJobs } from '../../src/daemon/jobs.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { createServer, type HealthReport } from '../../src/daemon/server.js';
import type { Config } from '../../src/config/schema.js';
import { directoriesFingerprint } from '../../src/core/daemon-identity.js';
import { parsePrometheusStrictly } from '../support/prometheus.js';
import { uniquePrefix } from '../../harness/redis.js';
import { createFakeInspection, makeConfig, makeSpace, makeSummary, silentLogger } from './fakes.js';
import { failOnLeftovers, openQueue, openRedis, track } from './harness.js';

failOnLeftovers();

const TOKEN = 'a-very-secret-token-of-32-chars!';
const now = () => new Date('2025-06-02T12:00:00Z');

async function setUp(label: string, server: Partial<Config['server']> = {}) {
  const redis = await openRedis();
  const config = makeConfig({
    redisUrl: redis.url,
    redisPrefix: uniquePrefix(label),
    spaces: [makeSpace('alpha'), makeSpace('beta')],
    server,
  });
  const queue = openQueue(config);
  const inspection = createFakeInspection({
    alpha: { settledNew: 6, live: 1, lastSuccessfulRunAt: '2025-06-01T00:00:00Z' },
    beta: { settledNew: 2 },
  });
  const jobs = bullmqJobs(queue);
  const metrics = createMetrics(jobs, queue);
  let health: HealthReport = {
    ok: true,
    queue: 'redis',
    redis: 'up',
    workers: 'running',
    scheduler: 'started',
  };
  const api = await createServer({
    getConfig: () => config,
    jobs,
    dashboardQueue: queue,
    inspectSpace: inspection.inspectSpace,
    metrics,
    health: async () => health,
    now,
    logger: silentLogger,
  });
  let closed = false;
  track(
    'http server',
    api,
    () => !closed,
    (value) => value.close(),
  );
  return {
    redis,
    queue,
    metrics,
    inspection,
    app: api.app,
    setHealth: (report: HealthReport) => (health = report),
    async tearDown() {
      closed = true;
      await api.close();
      await queue.close();
      await redis.stop();
    },
  };
}

/** The routes a configured token guards, on any host: reading, the dashboard, and the state-changing ones. */
const GUARDED_ROUTES: readonly (readonly ['GET' | 'POST', string])[] = [
  ['GET', '/daemon'],
  ['GET', '/spaces'],
  ['GET', '/spaces/alpha'],
  ['GET', '/metrics'],
  ['GET', '/page'],
  ['GET', '/proposals'],
  ['GET', '/queue'],
  ['GET', '/queues'],
  ['POST', '/spaces/alpha/consolidate'],
  ['POST', '/spaces/alpha/proposals/run-1/accept'],
];

/**
 * Checks a server guarded by a token: /healthz answers 200, each of `routes` answers 401 without a token (and
 * with a wrong one, given `wrongToken`), and no refused request queued a run; `headers` go with each request.
 */
async function expectGuarded(
  ctx: Awaited<ReturnType<typeof setUp>>,
  routes: readonly (readonly ['GET' | 'POST', string])[],
  { headers = {}, wrongToken = false }: { headers?: Record<string, string>; wrongToken?: boolean },
): Promise<void> {
  expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  for (const [method, url] of routes) {
    const without = await ctx.app.inject({ method, url, headers });
    expect(without.statusCode, `${method} ${url} without a token`).toBe(401);
    if (!wrongToken) continue;
    const wrong = await ctx.app.inject({
      method,
      url,
      headers: { ...headers, authorization: 'Bearer not-the-token-at-all-nope!!' },
    });
    expect(wrong.statusCode, `${method} ${url} with a wrong token`).toBe(401);
  }
  expect(await ctx.queue.getWaitingCount()).toBe(0);
}

describe('HTTP API', () => {
  it('enqueues a run on POST /spaces/:id/consolidate and answers 409 while it is queued', async () => {
    const ctx = await setUp('post');
    const first = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      payload: { force: true },
    });
    expect(first.statusCode).toBe(202);
    const { jobId } = first.json<{ jobId: string }>();
    const job = (await ctx.queue.getJob(jobId))!;
    expect(job.data).toMatchObject({ spaceId: 'alpha', force: true, dryRun: false, trigger: 'api' });

    const second = await ctx.app.inject({ method: 'POST', url: '/spaces/alpha/consolidate' });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ jobId, state: 'waiting' });

    const other = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/beta/consolidate',
      payload: { dryRun: true },
    });
    expect(other.statusCode).toBe(202);
    await ctx.tearDown();
  });

  it('answers 404 for an unknown space and 400 for a bad body', async () => {
    const ctx = await setUp('bad');
    expect((await ctx.app.inject({ method: 'POST', url: '/spaces/nope/consolidate' })).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: '/spaces/nope' })).statusCode).toBe(404);
    const bad = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      payload: { force: 'yes' },
    });
    expect(bad.statusCode).toBe(400);
    const extra = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      payload: { everything: true },
    });
    expect(extra.statusCode).toBe(400);
    expect(await ctx.queue.getWaitingCount()).toBe(0);
    await ctx.tearDown();
  });

  it('lists spaces with their inspection, gates and current job', async () => {
    const ctx = await setUp('spaces');
    await ctx.app.inject({ method: 'POST', url: '/spaces/beta/consolidate' });
    const list = await ctx.app.inject({ method: 'GET', url: '/spaces' });
    expect(list.statusCode).toBe(200);
    const { spaces } = list.json<{
      spaces: { id: string; gates: { open: boolean }; currentJob: unknown }[];
    }>();
    expect(spaces.map((space) => [space.id, space.gates.open])).toEqual([
      ['alpha', true],
      ['beta', false],
    ]);
    expect(spaces[1]!.currentJob).toMatchObject({ state: 'waiting' });

    const one = await ctx.app.inject({ method: 'GET', url: '/spaces/alpha' });
    expect(one.json()).toMatchObject({
      id: 'alpha',
      inspection: { settledNew: 6, live: 1 },
      gates: { open: true, reasons: [] },
      currentJob: null,
      lastRun: null,
    });
    await ctx.tearDown();
  });

  it('serves health with 503 when Redis is down', async () => {
    const ctx = await setUp('health');
    expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    ctx.setHealth({ ok: false, queue: 'redis', redis: 'down', workers: 'running', scheduler: 'started' });
    const down = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ redis: 'down' });
    await ctx.tearDown();
  });

  it('exposes Prometheus metrics: jobs by state, runs, tokens, facts, pending sessions and BullMQ metrics', async () => {
    const ctx = await setUp('metrics');
    await ctx.app.inject({ method: 'POST', url: '/spaces/alpha/consolidate' });
    ctx.metrics.recordRun(
      makeSummary(makeSpace('alpha'), { force: false, dryRun: false, trigger: 'schedule' }),
    );
    ctx.metrics.setPendingSessions('beta', 2);
    const response = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    const samples = [
      'dreamd_jobs{state="waiting"} 1',
      'dreamd_run_duration_seconds_bucket{le="5",space="alpha",status="completed"} 1',
      'dreamd_model_tokens_total{space="alpha",kind="input"} 1000',
      'dreamd_model_cost_usd_total{space="alpha"} 0.002',
      'dreamd_facts_added_total{space="alpha"} 3',
      'dreamd_facts_superseded_total{space="alpha"} 2',
      'dreamd_facts_quarantined_total{space="alpha"} 1',
      'dreamd_pending_sessions{space="beta"} 2',
      'bullmq_job_count{queue="consolidation",state="waiting"} 1',
    ];
    // Every sample is in the text: a failure lists the ones that are missing.
    expect(samples.filter((sample) => !text.includes(sample))).toEqual([]);
    // A strict parser takes the whole text, and the process's own metrics are in it.
    const families = parsePrometheusStrictly(text);
    expect(families.get('dreamd_run_duration_seconds')?.type).toBe('histogram');
    expect(families.get('bullmq_job_count')?.type).toBe('gauge');
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(families.has(name), name).toBe(true);
    await ctx.tearDown();
  });

  it('answers 400 with the reason for a run id in a URL that no run could have', async () => {
    const ctx = await setUp('run-id');
    for (const run of ['..%2F..', '%00', 'a%0Ab', '-run', 'a%20b'])
      for (const action of ['accept', 'reject']) {
        const url = `/spaces/alpha/proposals/${run}/${action}`;
        const answer = await ctx.app.inject({ method: 'POST', url, payload: {} });
        expect(answer.statusCode, url).toBe(400);
        expect(answer.json<{ error: string }>().error, url).toMatch(
          /^invalid run id .*: use letters, digits/,
        );
      }
    await ctx.tearDown();
  });

  it('serves the Bull Board dashboard at /queues', async () => {
    const ctx = await setUp('board');
    const page = await ctx.app.inject({ method: 'GET', url: '/queues' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const api = await ctx.app.inject({ method: 'GET', url: '/queues/api/queues' });
    expect(api.statusCode).toBe(200);
    expect(api.body).toContain('consolidation');
    await ctx.tearDown();
  });

  it('requires the bearer token on a non-loopback host, except for /healthz', async () => {
    const ctx = await setUp('auth', { host: '0.0.0.0', apiToken: TOKEN });
    await expectGuarded(ctx, GUARDED_ROUTES, { wrongToken: true });
    const allowed = await ctx.app.inject({
      method: 'GET',
      url: '/spaces',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(allowed.statusCode).toBe(200);
    const posted = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(posted.statusCode).toBe(202);
    await ctx.tearDown();
  });

  it('opens the dashboard in a browser with basic auth, the token as the password', async () => {
    const ctx = await setUp('basic', { host: '0.0.0.0', apiToken: TOKEN });
    const prompt = await ctx.app.inject({ method: 'GET', url: '/queues' });
    expect(prompt.statusCode).toBe(401);
    expect(prompt.headers['www-authenticate']).toMatch(/^Basic realm="dreamd"/);
    const basic = (user: string, password: string) =>
      `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const wrong = await ctx.app.inject({
      method: 'GET',
      url: '/queues',
      headers: { authorization: basic('admin', 'not-the-token-at-all-nope!!') },
    });
    expect(wrong.statusCode).toBe(401);
    const opened = await ctx.app.inject({
      method: 'GET',
      url: '/queues',
      headers: { authorization: basic('admin', TOKEN) },
    });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['content-type']).toContain('text/html');
    const api = await ctx.app.inject({ method: 'GET', url: '/spaces' });
    expect(api.headers['www-authenticate']).toBe('Bearer');
    await ctx.tearDown();
  });

  it('needs no token on loopback when none is configured', async () => {
    const ctx = await setUp('loopback', { host: '127.0.0.1' });
    expect((await ctx.app.inject({ method: 'GET', url: '/spaces' })).statusCode).toBe(200);
    await ctx.tearDown();
  });

  it('requires a configured token on loopback too, except for /healthz', async () => {
    const ctx = await setUp('loopback-token', { host: '127.0.0.1', apiToken: TOKEN });
    await expectGuarded(ctx, GUARDED_ROUTES, { headers: { host: '127.0.0.1:7077' } });
    const allowed = await ctx.app.inject({
      method: 'GET',
      url: '/daemon',
      headers: { host: '127.0.0.1:7077', authorization: `Bearer ${TOKEN}` },
    });
    expect(allowed.statusCode).toBe(200);
    // Behind the token the identity is given in full, as on any other host.
    expect(allowed.json()).toHaveProperty('configSource');
    await ctx.tearDown();
  });

  it('tells who it is at /daemon: folders and config path only behind a token, a fingerprint to anyone', async () => {
    const open = await setUp('identity-open', { host: '127.0.0.1' });
    const alpha = makeSpace('alpha');
    const anyone = (await open.app.inject({ method: 'GET', url: '/daemon' })).json<{
      spaces: Record<string, unknown>[];
    }>();
    expect(anyone).not.toHaveProperty('configSource');
    expect(anyone.spaces[0]).toEqual({
      id: 'alpha',
      directories: directoriesFingerprint(alpha.sessionsDir, alpha.memoryDir),
    });
    await open.tearDown();

    const guarded = await setUp('identity-token', { host: '0.0.0.0', apiToken: TOKEN });
    const holder = await guarded.app.inject({
      method: 'GET',
      url: '/daemon',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(holder.json()).toMatchObject({
      configSource: null,
      spaces: [{ id: 'alpha', sessionsDir: alpha.sessionsDir, memoryDir: alpha.memoryDir }, { id: 'beta' }],
    });
    expect((await guarded.app.inject({ method: 'GET', url: '/daemon' })).statusCode).toBe(401);
    await guarded.tearDown();
  });

  it('answers 421 without a token when the Host is not a loopback name (DNS rebinding), on every route', async () => {
    const ctx = await setUp('rebinding', { host: '127.0.0.1' });
    const queueName = ctx.queue.name;
    for (const [method, url] of [
      ['GET', '/spaces'],
      ['GET', '/healthz'],
      ['GET', '/queues/api/queues'],
      ['POST', '/spaces/alpha/consolidate'],
      ['PUT', `/queues/api/queues/${queueName}/pause`],
      ['PUT', `/queues/api/queues/${queueName}/clean/completed`],
    ] as const) {
      const forged = await ctx.app.inject({ method, url, headers: { host: 'attacker.example:7077' } });
      expect(forged.statusCode, `${method} ${url}`).toBe(421);
      expect(forged.json().error).toMatch(/not a loopback name/);
    }
    expect(await ctx.queue.isPaused()).toBe(false);
    expect(await ctx.queue.getWaitingCount()).toBe(0);
    for (const host of ['localhost:7077', '127.0.0.1:7077', '127.9.9.9', '[::1]:7077', 'app.localhost']) {
      const fine = await ctx.app.inject({ method: 'GET', url: '/spaces', headers: { host } });
      expect(fine.statusCode, host).toBe(200);
    }
    await ctx.tearDown();
  });

  it('refuses state-changing requests a browser sent from another origin, token or not', async () => {
    const ctx = await setUp('cross-origin', { host: '127.0.0.1' });
    const queueName = ctx.queue.name;
    const crossSite = [
      { origin: 'https://attacker.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'http://localhost:3000' },
    ];
    for (const headers of crossSite) {
      const posted = await ctx.app.inject({ method: 'POST', url: '/spaces/alpha/consolidate', headers });
      expect(posted.statusCode, JSON.stringify(headers)).toBe(403);
      const paused = await ctx.app.inject({
        method: 'PUT',
        url: `/queues/api/queues/${queueName}/pause`,
        headers,
      });
      expect(paused.statusCode, JSON.stringify(headers)).toBe(403);
    }
    expect(await ctx.queue.isPaused()).toBe(false);
    expect(await ctx.queue.getWaitingCount()).toBe(0);
    // Reading is not refused (a cross-origin page cannot read the answer), and the same origin may write.
    const read = await ctx.app.inject({
      method: 'GET',
      url: '/spaces',
      headers: { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(read.statusCode).toBe(200);
    const sameOrigin = await ctx.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      headers: { host: '127.0.0.1:7077', origin: 'http://127.0.0.1:7077', 'sec-fetch-site': 'same-origin' },
    });
    expect(sameOrigin.statusCode).toBe(202);
    // The route refused above does pause the queue when the request is not cross-origin.
    const pause = await ctx.app.inject({ method: 'PUT', url: `/queues/api/queues/${queueName}/pause` });
    expect(pause.statusCode).toBe(200);
    expect(await ctx.queue.isPaused()).toBe(true);
    await ctx.queue.resume();
    await ctx.tearDown();

    const withToken = await setUp('cross-origin-token', { host: '0.0.0.0', apiToken: TOKEN });
    const refused = await withToken.app.inject({
      method: 'POST',
      url: '/spaces/alpha/consolidate',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        origin: 'https://attacker.example',
        host: 'dreamd.lan:7077',
      },
    });
    expect(refused.statusCode).toBe(403);
    // With a token the Host may be any name: the token is the boundary.
    const named = await withToken.app.inject({
      method: 'GET',
      url: '/spaces',
      headers: { authorization: `Bearer ${TOKEN}`, host: 'dreamd.lan:7077' },
    });
    expect(named.statusCode).toBe(200);
    await withToken.tearDown();
  });
});
