/**
 * Loopback is not a boundary: a web page the user has open can reach 127.0.0.1. Two checks close the two ways:
 *
 * - **DNS rebinding.** A page on `evil.example` re-points its own name at 127.0.0.1 and then talks to the daemon
 *   as a same-origin page of `evil.example`: the request reaches the loopback port, but its `Host` header still
 *   names the attacker's domain. Without a token, only a loopback `Host` is served (`localhost`, `*.localhost`,
 *   127.0.0.0/8, `[::1]`, any port); anything else is answered 421 Misdirected Request. A `Host` that is not a
 *   host and an optional port (`127.0.0.1:7077 evil.example`) is answered 400, token or not.
 * - **Cross-site requests.** A page on any origin can send a POST to http://127.0.0.1:7077 (a form, or a
 *   `fetch` in `no-cors` mode): it cannot read the answer, but the run is queued, the queue paused, the jobs
 *   deleted. A browser says where a request comes from (`Sec-Fetch-Site`, and `Origin` on every POST); a
 *   state-changing request (anything but GET, HEAD, OPTIONS) from another origin is answered 403. Clients that
 *   are not browsers (the CLI, curl, scripts) send neither header and are not affected.
 */

/** Methods that change nothing on the server. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A `Host` header as RFC 9110 allows it: a bracketed IPv6 literal, or a name or IPv4 address of letters, digits,
 * `-`, `.`, `_` and `~`, then an optional `:port`. Anything else (a space, a second host, a bare IPv6 address, a
 * path) is malformed: read loosely, `127.0.0.1:7077 evil.example` would pass for loopback.
 */
const HOST_HEADER = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._~-]+))(?::\d{1,5})?$/;

/**
 * The host name of a `Host` header, without its port; brackets of an IPv6 literal removed; lower case. Undefined
 * when the header is not a host with an optional port (see `HOST_HEADER`).
 */
export function hostName(hostHeader: string): string | undefined {
  const match = HOST_HEADER.exec(hostHeader.trim().toLowerCase());
  return match === null ? undefined : (match[1] ?? match[2]);
}

/** Whether a host name (as `hostName` returns it) is a loopback name or address. */
export function isLoopbackName(name: string): boolean {
  const host = name.endsWith('.') ? name.slice(0, -1) : name;
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '::1' ||
    /^(?:0{0,4}:){1,7}:?0{0,3}1$/.test(host) ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/** True when the `Host` header is missing (not a browser) or names a loopback host; a malformed one does not. */
export function isLoopbackHostHeader(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined) return true;
  const name = hostName(hostHeader);
  return name !== undefined && isLoopbackName(name);
}

/** The request headers these checks read. */
export interface OriginHeaders {
  readonly host?: string | undefined;
  readonly origin?: string | undefined;
  readonly 'sec-fetch-site'?: string | undefined;
}

/**
 * True when a browser sent this request from another origin: `Sec-Fetch-Site` other than `same-origin` or
 * `none` (typed in the address bar), or an `Origin` whose host and port differ from `Host` (`Origin: null`,
 * sent by sandboxed frames and local files, counts as another origin).
 */
export function isCrossOriginBrowserRequest(headers: OriginHeaders): boolean {
  const site = headers['sec-fetch-site']?.trim().toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = headers.origin?.trim();
  if (origin === undefined || origin === '') return false;
  if (origin === 'null') return true;
  try {
    const from = new URL(origin);
    // The Host header read with the origin's scheme, so a default port (`:80`) compares equal to none.
    const to = new URL(`${from.protocol}//${(headers.host ?? '').trim()}`);
    return from.host !== to.host;
  } catch {
    return true;
  }
}

export type OriginVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 400 | 421 | 403; readonly error: string };

/**
 * The verdict on one request. `tokenRequired` is true when a token is configured (every route but /healthz needs
 * it, on any host, so the `Host` check is not needed: a rebinding page does not know the token).
 */
export function checkRequestOrigin(
  method: string,
  headers: OriginHeaders,
  options: { readonly tokenRequired: boolean },
): OriginVerdict {
  // Refused token or not: no HTTP client sends such a Host, and no check below should have to read one.
  if (headers.host !== undefined && hostName(headers.host) === undefined) {
    return {
      allowed: false,
      status: 400,
      error: `malformed Host header "${headers.host}": expected a host name or address and an optional :port`,
    };
  }
  if (!options.tokenRequired && !isLoopbackHostHeader(headers.host)) {
    return {
      allowed: false,
      status: 421,
      error: `Host "${headers.host ?? ''}" is not a loopback name; without an API token the daemon only answers requests to localhost, 127.0.0.1 or [::1] (set DREAMD_API_TOKEN and server.host to serve other names)`,
    };
  }
  if (!SAFE_METHODS.has(method.toUpperCase()) && isCrossOriginBrowserRequest(headers)) {
    return {
      allowed: false,
      status: 403,
      error:
        'cross-origin request refused: a page of another site cannot change the daemon; use the CLI or the same origin',
    };
  }
  return { allowed: true };
}
