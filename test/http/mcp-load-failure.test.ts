/**
 * engram serve loads the MCP SDK with the first request to /mcp or /ws (app.ts,
 * websocket.ts). That load can fail for a moment (EMFILE when a busy server is out of
 * file descriptors): such a request is answered 500 and the server keeps serving, and the
 * next one loads it again, as Node's import() retries a load that failed, rather than every
 * later /mcp request failing until a restart. Shutting down still closes everything.
 * The modules are mocked to fail as such a load would, a given number of times.
 */

import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { JSON_HEADERS, raw, startTestServer } from './fixtures.js';

const loads = vi.hoisted(() => ({ http: 0, websocket: 0 }));
const EMFILE = () => Object.assign(new Error('EMFILE: too many open files, open a chunk'), { code: 'EMFILE' });

vi.mock('../../src/mcp/http.js', async (importOriginal) => {
  if (loads.http > 0) {
    loads.http -= 1;
    throw EMFILE();
  }
  return importOriginal();
});

vi.mock('../../src/mcp/websocket.js', async (importOriginal) => {
  if (loads.websocket > 0) {
    loads.websocket -= 1;
    throw EMFILE();
  }
  return importOriginal();
});

/** The status of a WebSocket upgrade to /ws: 101 when it opened (then closed), else the refusal's. */
function upgrade(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, 'mcp');
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    socket.on('error', reject);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'load-failure', version: '1' } },
});

describe('the MCP SDK failing to load with the first /mcp or /ws request', () => {
  // First: once a test has loaded the SDK, the module stays loaded for this file.
  it('shuts down cleanly when the SDK never loaded', async () => {
    loads.http = 1;
    const server = await startTestServer();
    expect((await raw(server.port, { method: 'POST', headers: JSON_HEADERS, body: INITIALIZE })).status).toBe(500);
    await expect(server.close()).resolves.toBeUndefined();
  });

  it('answers that request 500, then loads it with the next, and still shuts down cleanly', async () => {
    loads.http = 1;
    const server = await startTestServer();

    const failed = await raw(server.port, { method: 'POST', headers: JSON_HEADERS, body: INITIALIZE });
    expect(failed.status).toBe(500);
    expect(server.logs.join('\n')).toContain('internal error');
    expect((await raw(server.port, { path: '/healthz' })).status).toBe(200);

    const next = await raw(server.port, { method: 'POST', headers: JSON_HEADERS, body: INITIALIZE });
    expect(next.status).toBe(200);
    expect(next.body).toContain('"serverInfo"');

    await expect(server.close()).resolves.toBeUndefined();
  });

  it('refuses that /ws upgrade 500, then opens the next', async () => {
    loads.websocket = 1;
    const server = await startTestServer();
    expect(await upgrade(server.port)).toBe(500);
    expect(server.logs.join('\n')).toContain('internal error');
    expect(await upgrade(server.port)).toBe(101);
  });
});
