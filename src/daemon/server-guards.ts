import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorMessage } from '../errors.js';
import { explainRefusedWrite } from './redis-probe.js';
import { checkRequestOrigin } from './request-origin.js';

/**
 * What guards every request of the daemon's HTTP API: the origin check and the token (see `createServer`),
 * and the answer to a request that failed (a Redis that refuses writes is a 503 with the reason).
 */

/** An error of a Redis command that says Redis refuses writes or cannot be reached. */
function isRedisUnavailable(message: string): boolean {
  return /^(READONLY|OOM|MISCONF|LOADING)\b|ECONNREFUSED|Connection is closed|Stream isn't writeable|Command timed out/.test(
    message,
  );
}

/** The token of `Authorization: Bearer <token>`, or the password of `Authorization: Basic <user:token>`. */
function presentedToken(header: string): string | undefined {
  const bearer = /^Bearer (.+)$/.exec(header);
  if (bearer !== null) return bearer[1];
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
  if (basic === null) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

function tokensMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Refuses a request from another origin, and one without the token when a token is configured. */
export function guardRequests(
  app: FastifyInstance,
  apiToken: string | undefined,
  requireToken: boolean,
): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = checkRequestOrigin(request.method, request.headers, { tokenRequired: requireToken });
    if (!origin.allowed) {
      await reply.code(origin.status).send({ error: origin.error });
      return;
    }
    if (apiToken === undefined || request.url === '/healthz') return;
    const given = presentedToken(request.headers.authorization ?? '');
    if (given === undefined || !tokensMatch(given, apiToken)) {
      // A browser cannot send a bearer header: for the dashboard, ask for basic auth (any user name, the
      // token as the password), which the browser prompts for and then sends with every request.
      const dashboard =
        request.url === '/queues' ||
        request.url.startsWith('/queues/') ||
        ['/page', '/page.js', '/page.css'].includes(request.url);
      await reply
        .code(401)
        .header('www-authenticate', dashboard ? 'Basic realm="dreamd", charset="UTF-8"' : 'Bearer')
        .send({
          error:
            'missing or wrong token; send Authorization: Bearer <DREAMD_API_TOKEN> (a browser: any user name, the token as the password)',
        });
    }
  });
}

/** Answers a failed request with its status and message; a Redis away or refusing writes is a 503. */
export function answerErrors(app: FastifyInstance): void {
  app.setErrorHandler(async (error: unknown, request, reply) => {
    const status =
      typeof error === 'object' &&
      error !== null &&
      'statusCode' in error &&
      typeof error.statusCode === 'number'
        ? error.statusCode
        : 500;
    const message = errorMessage(error);
    // Redis answered but refused the write, or is away: the request may succeed later, so 503 with the reason
    // (the same words /healthz gives), not a 500 with Redis's raw error.
    if (status === 500 && isRedisUnavailable(message)) {
      const reason = /^(READONLY|OOM|MISCONF|LOADING)\b/.test(message)
        ? explainRefusedWrite(message)
        : `Redis unreachable: ${message}`;
      await reply
        .code(503)
        .header('retry-after', '30')
        .send({ error: `the queue cannot take jobs now: ${reason}` });
      return;
    }
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    await reply.code(status).send({ error: message });
  });
}
