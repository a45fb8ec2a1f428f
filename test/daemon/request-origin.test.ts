import { describe, expect, it } from 'vitest';
import {
  checkRequestOrigin,
  hostName,
  isCrossOriginBrowserRequest,
  isLoopbackHostHeader,
} from '../../src/daemon/request-origin.js';

describe('request origin', () => {
  it.each([
    ['LocalHost:7077', 'localhost'],
    ['[::1]:7077', '::1'],
    ['127.0.0.1', '127.0.0.1'],
  ])('reads the Host header %j as the host name %j, ports and IPv6 brackets aside', (host, name) => {
    expect(hostName(host)).toBe(name);
  });

  it.each([
    '127.0.0.1:7077 evil.example',
    '127.0.0.1 evil.example',
    'localhost:7077,evil.example',
    '127.0.0.1:7077/evil',
    '127.0.0.1:7077\tevil.example',
    'localhost@evil.example',
    '127.0.0.1:abc',
    '[::1]evil',
    '::1',
    '',
  ])(
    'reads the Host header %j, not a host and an optional port, as malformed and not as loopback',
    (host) => {
      expect(hostName(host)).toBeUndefined();
      expect(isLoopbackHostHeader(host)).toBe(false);
      expect(checkRequestOrigin('GET', { host }, { tokenRequired: true })).toMatchObject({
        allowed: false,
        status: 400,
      });
    },
  );

  it.each([
    ['localhost', true],
    ['localhost.', true],
    ['api.localhost:80', true],
    ['127.0.0.1:7077', true],
    ['127.1.2.3', true],
    ['[::1]', true],
    ['[0:0:0:0:0:0:0:1]:7077', true],
    ['[::ffff:127.0.0.1]', true],
    ['evil.example', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.nip.io', false],
    ['10.0.0.1', false],
    ['[::2]', false],
    ['0.0.0.0', false],
    ['', false],
    [undefined, true],
  ])(
    'takes the Host header %j as loopback: %s (loopback names and addresses only, or no header)',
    (host, loopback) => {
      expect(isLoopbackHostHeader(host)).toBe(loopback);
    },
  );

  it.each([
    [{ host: 'localhost:7077' }, false],
    [{ host: 'localhost:80', origin: 'http://localhost' }, false],
    [{ host: 'localhost:7077', 'sec-fetch-site': 'none' }, false],
    [{ host: 'localhost:7077', origin: 'http://localhost:7078' }, true],
    [{ host: 'localhost:7077', origin: 'not a url' }, true],
    [{ host: 'localhost:7077', 'sec-fetch-site': 'same-site' }, true],
  ])(
    'tells whether %j is a cross-origin browser request (%s), not a same-origin one or a client that is not a browser',
    (headers, crossOrigin) => {
      expect(isCrossOriginBrowserRequest(headers)).toBe(crossOrigin);
    },
  );

  it('answers 421 for a foreign Host only without a token, and 403 only for state-changing methods', () => {
    const foreign = { host: 'evil.example' };
    expect(checkRequestOrigin('GET', foreign, { tokenRequired: false })).toMatchObject({
      allowed: false,
      status: 421,
    });
    expect(checkRequestOrigin('GET', foreign, { tokenRequired: true })).toEqual({ allowed: true });
    const cross = { host: 'localhost', origin: 'https://evil.example' };
    expect(checkRequestOrigin('GET', cross, { tokenRequired: false })).toEqual({ allowed: true });
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'])
      expect(checkRequestOrigin(method, cross, { tokenRequired: false })).toMatchObject({ status: 403 });
  });
});
