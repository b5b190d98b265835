/**
 * `engram serve` run in this process through main(argv, io): it says where it listens on
 * io.stdout, logs on io.stderr, stops when io.stopRequested says (not on the process's
 * signals, which the real process is tested with in test/http/serve.e2e.test.ts), and
 * reports a failure to start as main()'s exit code, leaving process.exitCode and the
 * process's listeners as they were.
 */

import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import v8 from 'node:v8';
import { afterEach, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { main } from '../../src/cli/program.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { serveInProcess } from './fixtures.js';

/** serveInProcess with src's main() on a fresh database, given back with it. */
function serveFresh(args: string[], failingStop?: Error) {
  const dir = tempDir();
  const db = dir.file('memory.db');
  return { db, ...serveInProcess(main, ['--port', '0', '--db', db, ...args], childEnv(dir.path), failingStop) };
}

const listenersBefore = { exit: process.listenerCount('exit'), sigterm: process.listenerCount('SIGTERM') };

afterEach(() => {
  expect(process.exitCode).toBeUndefined();
  expect(process.listenerCount('exit')).toBe(listenersBefore.exit);
  expect(process.listenerCount('SIGTERM')).toBe(listenersBefore.sigterm);
});

it('says where it listens, logs each request, and stops when asked, with exit code 0', async () => {
  const served = serveFresh(['--json']);
  const url = await served.listening;
  const health = await fetch(new URL('/healthz', url));
  expect(health.status).toBe(200);
  await health.text();
  served.stop('told to');
  expect(await served.exited).toBe(0);
  expect(served.out.stderr).toMatch(/ GET \/healthz .*status=200/);
  expect(served.out.stderr).toContain('engram: told to: finishing requests in flight, then stopping\n');
  await expect(fetch(new URL('/healthz', url))).rejects.toThrow();
});

it("turns V8's allocation-site pretenuring off before it serves, so that each request's objects die young", async () => {
  const setFlags = vi.spyOn(v8, 'setFlagsFromString');
  const served = serveFresh(['--json']);
  try {
    await served.listening;
    expect(setFlags).toHaveBeenCalledWith('--no-allocation-site-pretenuring');
  } finally {
    served.stop('told to');
    setFlags.mockRestore();
  }
  expect(await served.exited).toBe(0);
});

it('closes what it opened when it fails after listening: exit 1, the port closed, the store closed', async () => {
  const served = serveFresh(['--json'], new Error('the stop signal broke'));
  expect(await served.exited).toBe(1);
  const url = await served.listening;
  expect(served.out.stderr).toBe('engram: the stop signal broke\n');
  await expect(fetch(new URL('/healthz', url))).rejects.toThrow();
  // SQLite removes the write-ahead log when the last connection to the file closes.
  expect(existsSync(`${served.db}-wal`)).toBe(false);
});

it('on a port already in use: exit 1, saying to choose another, on its stderr', async () => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const { port } = busy.address() as { port: number };
  try {
    const served = serveFresh(['--port', String(port)]);
    expect(await served.exited).toBe(1);
    expect(served.out).toEqual({
      stdout: '',
      stderr: `engram: port ${port} on 127.0.0.1 is already in use; choose another with --port.\n`,
    });
  } finally {
    busy.close();
  }
});

it('refuses an unsafe binding before opening anything: exit 1 on its stderr', async () => {
  const served = serveFresh(['--host', '0.0.0.0']);
  expect(await served.exited).toBe(1);
  expect(served.out.stdout).toBe('');
  expect(served.out.stderr).toMatch(/^refusing to serve on 0\.0\.0\.0 without authentication/);
});

it("takes the config file's caps on WebSocket sockets: one more socket than the user's cap is closed at once, saying so", async () => {
  const dir = tempDir();
  const config = dir.file('config.json');
  writeFileSync(config, JSON.stringify({ webSocket: { socketsPerUser: 1 } }));
  const served = serveInProcess(
    main,
    ['--port', '0', '--db', dir.file('memory.db'), '--config', config, '--json'],
    childEnv(dir.path),
  );
  const url = new URL('/ws', (await served.listening).replace(/^http/, 'ws'));
  const closed = (socket: WebSocket) =>
    new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  const first = new WebSocket(url, ['mcp']);
  await new Promise((resolve) => first.once('open', resolve));
  const second = new WebSocket(url, ['mcp']);
  expect(await closed(second)).toEqual({
    code: 1008,
    reason: 'This user has 1 socket open, the most one user may: close one (in another tab or app) and connect again.',
  });
  first.close();
  await closed(first);
  served.stop('told to');
  expect(await served.exited).toBe(0);
});
