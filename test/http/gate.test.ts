/**
 * The Host and Origin rules are one gate (origins.ts browserGate) for every door: a
 * request by a name a loopback server does not answer to (DNS rebinding), or from a page
 * whose origin may not call, is refused with the same status and the same JSON-RPC error
 * on /mcp (HTTP) and on /ws (the WebSocket upgrade), and neither refuses what the other lets in.
 */

import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { rpc, startTestServer } from './fixtures.js';
import { type SocketAnswer, sendUntilClosed } from './raw-socket.js';

const UPGRADE =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n';

/** The same Host and Origin (when given) as a POST to /mcp and as an upgrade of /ws. */
function requests(host: string, origin: string | undefined): { mcp: string; ws: string } {
  const from = origin === undefined ? '' : `Origin: ${origin}\r\n`;
  const body = rpc('ping');
  return {
    mcp:
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\n${from}Content-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ws: `GET /ws HTTP/1.1\r\nHost: ${host}\r\n${from}${UPGRADE}\r\n`,
  };
}

/** Both refused: the whole answers (the server hangs up after a refusal). */
async function both(port: number, host: string, origin?: string): Promise<{ mcp: SocketAnswer; ws: SocketAnswer }> {
  const sent = requests(host, origin);
  const [mcp, ws] = await Promise.all([sendUntilClosed(port, sent.mcp), sendUntilClosed(port, sent.ws)]);
  return { mcp, ws };
}

/** The status of the answer's first line; the connection (an open WebSocket, say) is then cut. */
function statusOf(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n')) {
        resolve(Number(text.split(' ')[1]));
        socket.destroy();
      }
    });
    socket.on('error', reject);
  });
}

function error(answer: SocketAnswer): unknown {
  return JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4));
}

describe('Host and Origin, the same on /mcp and /ws', () => {
  it.each([
    [
      'a foreign Host',
      'evil.example',
      undefined,
      /^Forbidden: this server answers only to localhost, 127\.0\.0\.1 \(any 127\.x\.y\.z\) and \[::1\], not to Host "evil\.example"\. To reach it under another name, start engram serve with --public-url set to the address people use\.$/,
    ],
    [
      'a Host that only starts like localhost',
      'localhost.evil.example',
      undefined,
      /not to Host "localhost\.evil\.example"/,
    ],
    [
      'a foreign Origin',
      '127.0.0.1',
      'https://evil.example',
      /^Forbidden: pages from https:\/\/evil\.example may not use this memory/,
    ],
    ['Origin null', '127.0.0.1', 'null', /^Forbidden: pages opened from a file or in a sandbox \(Origin null\)/],
  ])('%s: 403 with one same error', async (_, host, origin, message) => {
    // A loopback public URL is among the names the message already gives, on both doors.
    const server = await startTestServer({ publicUrl: new URL('http://localhost') });
    const { mcp, ws } = await both(server.port, host, origin);

    expect([mcp.status, ws.status]).toEqual([403, 403]);
    expect(error(ws)).toEqual(error(mcp));
    expect(error(mcp)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(message) },
      id: null,
    });
  });

  it('names a public URL beyond loopback in the Host refusal, on both', async () => {
    const server = await startTestServer({ publicUrl: new URL('https://memory.example.com') });
    const { mcp, ws } = await both(server.port, 'evil.example');

    expect([mcp.status, ws.status]).toEqual([403, 403]);
    expect(error(ws)).toEqual(error(mcp));
    expect(JSON.stringify(error(mcp))).toContain('127.0.0.1 (any 127.x.y.z), memory.example.com and [::1]');
  });

  it('lets in a loopback Host, the public URL’s, and a page of this computer, on both', async () => {
    const server = await startTestServer({ publicUrl: new URL('https://memory.example.com') });
    for (const [host, origin] of [
      ['127.0.0.1', 'http://localhost:5173'],
      ['memory.example.com', undefined],
    ] as const) {
      const sent = requests(host, origin);
      expect([await statusOf(server.port, sent.mcp), await statusOf(server.port, sent.ws)]).toEqual([200, 101]);
    }
  });
});
