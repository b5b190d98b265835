/**
 * The client's address: X-Forwarded-For is ignored unless the proxy is trusted, and then
 * only its rightmost entry (the one the proxy wrote) counts.
 */

import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/http/client-address.js';

function request(headers: Record<string, string[]>, socket: { remoteAddress?: string } = {}) {
  return { socket: { remoteAddress: '10.0.0.2', ...socket }, headersDistinct: headers } as unknown as IncomingMessage;
}

describe('clientAddress', () => {
  it('is the socket peer, whatever X-Forwarded-For says, unless the proxy is trusted', () => {
    const req = request({ 'x-forwarded-for': ['203.0.113.9'] });
    expect(clientAddress(req, false)).toBe('10.0.0.2');
    expect(clientAddress(req, true)).toBe('203.0.113.9');
  });

  it('takes the rightmost entry: the one the trusted proxy appended, not what the client wrote before it', () => {
    expect(clientAddress(request({ 'x-forwarded-for': ['1.1.1.1, 2.2.2.2, 203.0.113.9'] }), true)).toBe('203.0.113.9');
    expect(clientAddress(request({ 'x-forwarded-for': ['1.1.1.1', '203.0.113.9'] }), true)).toBe('203.0.113.9');
  });

  it.each([
    ['203.0.113.9:51234', '203.0.113.9'],
    ['[2001:db8::7]:443', '2001:db8::7'],
    ['2001:db8::7', '2001:db8::7'],
    [' 203.0.113.9 ', '203.0.113.9'],
  ])('reads %s as %s', (value, address) => {
    expect(clientAddress(request({ 'x-forwarded-for': [value] }), true)).toBe(address);
  });

  it.each([['unknown'], ['1.1.1.1, '], ['<script>'], ['1.1.1.1, not-an-address']])(
    'falls back to the socket peer when the rightmost entry of %s is no address',
    (value) => {
      expect(clientAddress(request({ 'x-forwarded-for': [value] }), true)).toBe('10.0.0.2');
    },
  );

  it('is the socket peer when no proxy header came', () => {
    expect(clientAddress(request({}), true)).toBe('10.0.0.2');
    expect(clientAddress(request({}, { remoteAddress: '::1' }), false)).toBe('::1');
  });
});
