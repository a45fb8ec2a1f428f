import { describe, expect, it } from 'vitest';
import {
  checkRequestOrigin,
  hostName,
  isCrossOriginBrowserRequest,
  isLoopbackHostHeader,
} from '../../src/daemon/request-origin.js';

describe('request origin', () => {
  it('reads the host name of a Host header, ports and IPv6 brackets aside', () => {
    expect(hostName('LocalHost:7077')).toBe('localhost');
    expect(hostName('[::1]:7077')).toBe('::1');
    expect(hostName('127.0.0.1')).toBe('127.0.0.1');
  });

  it('reads a Host header that is not a host and an optional port as malformed, and not as loopback', () => {
    for (const host of [
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
    ]) {
      expect(hostName(host), host).toBeUndefined();
      expect(isLoopbackHostHeader(host), host).toBe(false);
      expect(checkRequestOrigin('GET', { host }, { tokenRequired: true }), host).toMatchObject({
        allowed: false,
        status: 400,
      });
    }
  });

  it('takes loopback names and addresses as loopback, and nothing else', () => {
    for (const host of [
      'localhost',
      'localhost.',
      'api.localhost:80',
      '127.0.0.1:7077',
      '127.1.2.3',
      '[::1]',
      '[0:0:0:0:0:0:0:1]:7077',
      '[::ffff:127.0.0.1]',
    ])
      expect(isLoopbackHostHeader(host), host).toBe(true);
    for (const host of [
      'evil.example',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '10.0.0.1',
      '[::2]',
      '0.0.0.0',
      '',
    ])
      expect(isLoopbackHostHeader(host), host).toBe(false);
    expect(isLoopbackHostHeader(undefined)).toBe(true);
  });

  it('tells a cross-origin browser request from a same-origin one and from a client that is not a browser', () => {
    expect(isCrossOriginBrowserRequest({ host: 'localhost:7077' })).toBe(false);
    expect(isCrossOriginBrowserRequest({ host: 'localhost:80', origin: 'http://localhost' })).toBe(false);
    expect(isCrossOriginBrowserRequest({ host: 'localhost:7077', 'sec-fetch-site': 'none' })).toBe(false);
    expect(isCrossOriginBrowserRequest({ host: 'localhost:7077', origin: 'http://localhost:7078' })).toBe(
      true,
    );
    expect(isCrossOriginBrowserRequest({ host: 'localhost:7077', origin: 'not a url' })).toBe(true);
    expect(isCrossOriginBrowserRequest({ host: 'localhost:7077', 'sec-fetch-site': 'same-site' })).toBe(true);
  });

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
