/**
 * The caps on WebSocket sockets (socket-caps.ts, websocket.ts), so that one token cannot
 * hold every file descriptor of the server: open sockets per token, per user and in all
 * (one more opens and is closed at once, with a code and a reason that names the cap and
 * what to do, since a browser shows no refused upgrade), and upgrades being checked at
 * once (one more is refused with 503 before any upgrade). A socket closed at once that
 * does not answer the close is cut off after a grace period, takes no place among the
 * upgrades being checked, and a user may have only a few such waiting (more: cut off at once).
 */

import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { WebSocket } from 'ws';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { startTestServer } from './fixtures.js';

interface Closed {
  readonly code: number;
  readonly reason: string;
}

interface Connection {
  readonly socket: WebSocket;
  readonly closed: Promise<Closed>;
}

function wsUrl(port: number, token?: string): string {
  return `ws://127.0.0.1:${port}/ws${token === undefined ? '' : `?access_token=${token}`}`;
}

/** A socket that has opened (the upgrade was accepted), and how it closes. */
function openSocket(url: string): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ['mcp']);
    onTestFinished(() => socket.terminate());
    const closed = new Promise<Closed>((done) =>
      socket.on('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    socket.on('error', reject);
    socket.on('unexpected-response', (_request, response) => reject(new Error(`refused: ${response.statusCode}`)));
    socket.on('open', () => resolve({ socket, closed }));
  });
}

/** Opens a socket that must be closed at once by a cap, and returns how. */
async function closedAtOnce(url: string): Promise<Closed> {
  return (await openSocket(url)).closed;
}

/** Closes a socket and waits until the server has let it go. */
async function closeSocket(connection: Connection): Promise<void> {
  connection.socket.close();
  await connection.closed;
}

/** The status and message of an upgrade refused before it opens. */
function refusedUpgrade(url: string): Promise<{ status: number; message: string; retryAfter: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ['mcp']);
    socket.on('error', () => {});
    socket.on('open', () => reject(new Error('the socket opened')));
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        const { message } = (JSON.parse(body) as { error: { message: string } }).error;
        resolve({ status: response.statusCode ?? 0, message, retryAfter: response.headers['retry-after'] });
        socket.terminate();
      });
    });
  });
}

interface SilentSocket {
  /** Resolves when the server ends the connection. */
  readonly ended: Promise<void>;
  isEnded(): boolean;
}

/** Completes a WebSocket handshake by hand, then reads nothing more: a close it is sent goes unanswered. */
function silentSocket(port: number, token: string): Promise<SilentSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `GET /ws?access_token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\n` +
          'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
          'Sec-WebSocket-Protocol: mcp\r\n\r\n',
      ),
    );
    onTestFinished(() => {
      socket.destroy();
    });
    let head = '';
    let isEnded = false;
    const ended = new Promise<void>((done) =>
      socket.once('close', () => {
        isEnded = true;
        done();
      }),
    );
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk;
      if (!head.includes('\r\n\r\n')) return;
      if (head.startsWith('HTTP/1.1 101')) resolve({ ended, isEnded: () => isEnded });
      else reject(new Error(head));
    });
  });
}

const TOKEN_CAP = {
  code: 1008,
  reason: 'This token has 2 sockets open, the most it may: close one (in another tab or app) and connect again.',
};
const USER_CAP = {
  code: 1008,
  reason: 'This user has 2 sockets open, the most one user may: close one (in another tab or app) and connect again.',
};
const SERVER_CAP = { code: 1013, reason: 'The server has 2 sockets open, the most it keeps: try again in a minute.' };

describe('WebSocket sockets per token', () => {
  it('one more than the cap is closed at once (1008, naming the cap); another token of the same user, or a socket closed first, makes room', async () => {
    const server = await startTestServer({ auth: 'token', webSocketLimits: { socketsPerToken: 2 } });
    const { token } = await server.access.create({ user: 'ada' });
    const { token: other } = await server.access.create({ user: 'ada' });
    const first = await openSocket(wsUrl(server.port, token));
    await openSocket(wsUrl(server.port, token));
    expect(await closedAtOnce(wsUrl(server.port, token))).toEqual(TOKEN_CAP);
    expect(server.logs).toContain(`ws: closed a new socket of user ada at once (1008): ${TOKEN_CAP.reason}`);
    // The same token with its scheme spelled otherwise, in the header, is the same token.
    await expect(
      new Promise((resolve) => {
        const socket = new WebSocket(wsUrl(server.port), ['mcp'], { headers: { Authorization: `bearer  ${token}` } });
        onTestFinished(() => socket.terminate());
        socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      }),
    ).resolves.toEqual(TOKEN_CAP);
    await openSocket(wsUrl(server.port, other));
    await closeSocket(first);
    await openSocket(wsUrl(server.port, token));
    for (const line of server.logs) expect(line).not.toContain(token);
  });
});

describe('WebSocket sockets per user', () => {
  it('one more than the cap, over all their tokens, is closed at once (1008, naming the cap); other users are served', async () => {
    const server = await startTestServer({ auth: 'token', webSocketLimits: { socketsPerUser: 2 } });
    const tokens = await Promise.all([1, 2, 3].map(() => server.access.create({ user: 'ada' })));
    const { token: bob } = await server.access.create({ user: 'bob' });
    await openSocket(wsUrl(server.port, tokens[0]?.token));
    await openSocket(wsUrl(server.port, tokens[1]?.token));
    expect(await closedAtOnce(wsUrl(server.port, tokens[2]?.token))).toEqual(USER_CAP);
    await openSocket(wsUrl(server.port, bob));
  });

  it('without auth, the one local user has the cap', async () => {
    const server = await startTestServer({ webSocketLimits: { socketsPerUser: 2 } });
    await openSocket(wsUrl(server.port));
    await openSocket(wsUrl(server.port));
    expect(await closedAtOnce(wsUrl(server.port))).toEqual(USER_CAP);
  });
});

describe('WebSocket sockets in all', () => {
  it('one more than the cap is closed at once (1013, try again later), whoever asks; a socket closed makes room', async () => {
    const server = await startTestServer({ auth: 'token', webSocketLimits: { sockets: 2 } });
    const [ada, bob, carol] = await Promise.all(['ada', 'bob', 'carol'].map((user) => server.access.create({ user })));
    const first = await openSocket(wsUrl(server.port, ada?.token));
    await openSocket(wsUrl(server.port, bob?.token));
    expect(await closedAtOnce(wsUrl(server.port, carol?.token))).toEqual(SERVER_CAP);
    await closeSocket(first);
    await openSocket(wsUrl(server.port, carol?.token));
  });
});

describe('WebSocket upgrades being checked at once', () => {
  it('one more than the cap is refused with 503 before the upgrade, saying to try again; once checked, the next is served', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let checking: () => void = () => {};
    const slowBeingChecked = new Promise<void>((resolve) => {
      checking = resolve;
    });
    const access = {
      authenticate: async (token: string) => {
        if (token === 'engram_slow') {
          checking();
          await held;
        }
        return { user: 'ada', label: token, readOnly: false };
      },
    } as unknown as Access;
    const running = await startHttpServer({
      app: { ...createApp({ store: openMemoryStore() }), access },
      handler: async () => ({ text: 'done', isError: false }),
      version: '0.0.0-test',
      auth: { mode: 'token' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      webSocketLimits: { handshakes: 1 },
    });
    onTestFinished(() => running.close());
    const slow = openSocket(wsUrl(running.port, 'engram_slow'));
    await slowBeingChecked;
    expect(await refusedUpgrade(wsUrl(running.port, 'engram_fast'))).toEqual({
      status: 503,
      message:
        'Service unavailable: 1 WebSocket connection being opened at once is the most the server checks at a time. ' +
        'Try again in a moment.',
      retryAfter: '1',
    });
    release();
    await slow;
    await openSocket(wsUrl(running.port, 'engram_fast'));
  });

  it('sockets closed at once by a cap that do not answer the close take no place among them: others still open', async () => {
    const server = await startTestServer({
      auth: 'token',
      webSocketLimits: { socketsPerToken: 1, handshakes: 1, refusedSocketGraceMs: 60_000 },
    });
    const { token } = await server.access.create({ user: 'ada' });
    const { token: bob } = await server.access.create({ user: 'bob' });
    await openSocket(wsUrl(server.port, token));
    await silentSocket(server.port, token);
    await silentSocket(server.port, token);
    await openSocket(wsUrl(server.port, bob));
  });
});

describe('WebSocket sockets closed at once by a cap', () => {
  it('one that does not answer the close is cut off after the grace period', async () => {
    const server = await startTestServer({
      auth: 'token',
      webSocketLimits: { socketsPerToken: 1, refusedSocketGraceMs: 200 },
    });
    const { token } = await server.access.create({ user: 'ada' });
    await openSocket(wsUrl(server.port, token));
    const silent = await silentSocket(server.port, token);
    await silent.ended;
  });

  it('a user has at most 4 waiting for their answer; one more is cut off at once, saying so in the log', async () => {
    const server = await startTestServer({
      auth: 'token',
      webSocketLimits: { socketsPerToken: 1, refusedSocketGraceMs: 60_000 },
    });
    const { token } = await server.access.create({ user: 'ada' });
    await openSocket(wsUrl(server.port, token));
    const waiting = await Promise.all([1, 2, 3, 4].map(() => silentSocket(server.port, token)));
    const fifth = await silentSocket(server.port, token);
    await fifth.ended;
    expect(server.logs).toContain(
      'ws: cut off a new socket of user ada at once (1008, 4 sockets already closing): This token has 1 socket ' +
        'open, the most it may: close one (in another tab or app) and connect again.',
    );
    for (const socket of waiting) expect(socket.isEnded()).toBe(false);
  });
});
