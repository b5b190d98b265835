/**
 * `engram serve` as a person starts it (the built CLI as a child process): it prints
 * where to connect, serves the SDK clients, logs each request on stderr, and on
 * SIGTERM/SIGINT stops cleanly with exit code 0. Unsafe or wrong start-ups are refused
 * with a clear message; tokens made and revoked by `engram token` work at once.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { childEnv, ENGRAM_CLI, queryDatabase, runEngram, tempDir } from '../helpers/engram.js';
import { stopGroup } from '../helpers/process-group.js';
import { HTTP_CLIENTS } from './clients.js';

interface Served {
  readonly child: ChildProcess;
  /** The MCP endpoint printed at start-up. */
  readonly url: string;
  /** Everything printed on stdout up to and including the connect help. */
  readonly banner: string;
  readonly stderr: () => string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Stops the child and every process it started, and waits until all have exited. */
  readonly stopAll: (signal: NodeJS.Signals) => Promise<void>;
}

/** Spawns a command that starts `engram serve` and waits for it to print where to connect. */
function serve(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Served> {
  // Its own process group: `npm start` runs sh, which runs node, and all must stop with the test.
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stopAll = (signal: NodeJS.Signals) => stopGroup(child, signal);
  onTestFinished(async () => {
    await stopAll('SIGKILL');
    await exited;
  });
  return new Promise((resolve, reject) => {
    let banner = '';
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      banner += `${line}\n`;
      if (line.includes('Stop with Ctrl-C.') || line.startsWith('{')) {
        const url = /serving MCP at (\S+)|"url":"([^"]+)"/.exec(banner)?.slice(1).find(Boolean);
        if (url) resolve({ child, url, banner, stderr: () => stderr, exited, stopAll });
      }
    });
    exited.then((code) => reject(new Error(`engram serve exited with ${code} before serving:\n${stderr}`)));
  });
}

function setup() {
  const dir = tempDir();
  const db = dir.file('m.db');
  return { db, env: childEnv(dir.path) };
}

describe('engram serve', () => {
  it('prints where to connect, serves an SDK client, logs each request, and stops on SIGTERM', async () => {
    const { db, env } = setup();
    const served = await serve(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', '--db', db], env);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.banner).toContain(`llama.cpp WebUI: add the MCP server ${served.url}`);
    expect(served.banner).toContain(`Claude Code:     claude mcp add --transport http engram ${served.url}`);
    expect(served.banner).toContain(`WebSocket:       ${served.url.replace(/^http(.*)\/mcp$/, 'ws$1/ws')}\n`);
    expect(served.banner).toContain(`Web UI:          ${served.url.replace(/\/mcp$/, '/')} (see and fix`);

    const session = await HTTP_CLIENTS[0]!.connect(served.url);
    expect(
      await session.call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' }),
    ).toEqual({
      text: 'topics/me (11 bytes): Who I am',
      isError: false,
    });
    await session.close();

    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    expect(served.stderr()).toMatch(/user=local POST \/mcp method=tools\/call tool=memory_write status=200/);
    expect(served.stderr()).toContain('SIGTERM: finishing requests in flight, then stopping');
    expect(served.stderr()).not.toContain('Name: Ada.');
    expect(queryDatabase<{ body: string }>(db, 'SELECT body FROM revisions')).toEqual([{ body: 'Name: Ada.\n' }]);
  });

  it('answers a plain tools/call on its fast path, or through the SDK with ENGRAM_ACCEL_HTTP_FAST_PATH=0', async () => {
    const post = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_open' } }),
      });
    for (const [switched, type] of [
      [{}, 'application/json'],
      [{ ENGRAM_ACCEL_HTTP_FAST_PATH: '0' }, 'text/event-stream'],
    ] as const) {
      const { db, env } = setup();
      const served = await serve(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', '--db', db], {
        ...env,
        ENGRAM_ACCEL_HTTP_FAST_PATH: undefined,
        ...switched,
      });
      const answer = await post(served.url);
      expect(answer.headers.get('content-type')).toBe(type);
      expect(await answer.text()).toContain('"isError":false');
      await served.stopAll('SIGTERM');
    }
  });

  it('stops on SIGINT (Ctrl-C) too', async () => {
    const { db, env } = setup();
    const served = await serve(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', '--db', db], env);
    // The bundle finds the web UI the build made (the browser tests run tsc's output, in their own process).
    const page = await fetch(served.url.replace(/\/mcp$/, '/'));
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(readFileSync(new URL('../../dist/web/index.html', import.meta.url), 'utf8'));
    served.child.kill('SIGINT');
    expect(await served.exited).toBe(0);
  });

  it('is what npm start runs', async () => {
    const { db, env } = setup();
    const served = await serve('npm', ['start', '--silent', '--', '--port', '0', '--db', db], env);
    expect(served.banner).toMatch(/^Engram is serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
    expect((await fetch(served.url.replace(/\/mcp$/, '/healthz'))).status).toBe(200);
    // npm runs sh, which runs the server: stopping them all leaves nothing listening.
    await served.stopAll('SIGTERM');
    await expect(fetch(served.url.replace(/\/mcp$/, '/healthz'))).rejects.toThrow();
  });

  it('with --auth token, accepts a token from engram token create and refuses it once revoked, without a restart', async () => {
    const { db, env } = setup();
    const created = await runEngram(
      ['token', 'create', '--user', 'ada', '--label', 'webui', '--json', '--db', db],
      env,
    );
    const { id, token } = JSON.parse(created.stdout) as { id: string; token: string };
    const served = await serve(
      process.execPath,
      [ENGRAM_CLI, 'serve', '--auth', 'token', '--port', '0', '--db', db],
      env,
    );
    expect(served.banner).toContain('--header "Authorization: Bearer <token>"');

    const session = await HTTP_CLIENTS[1]!.connect(served.url, { token });
    onTestFinished(() => session.close().catch(() => {}));
    expect((await session.call('memory_write', { name: 'topics/me', description: 'Me', new: 'x' })).isError).toBe(
      false,
    );
    expect((await runEngram(['token', 'revoke', id, '--db', db], env)).code).toBe(0);
    await expect(session.call('memory_open')).rejects.toThrow();
    expect(queryDatabase<{ actor: string }>(db, 'SELECT actor FROM revisions')).toEqual([{ actor: 'webui' }]);
  });

  it('warns at start-up when --auth token has no tokens yet', async () => {
    const { db, env } = setup();
    const served = await serve(
      process.execPath,
      [ENGRAM_CLI, 'serve', '--auth', 'token', '--port', '0', '--db', db],
      env,
    );
    served.child.kill('SIGTERM');
    await served.exited;
    expect(served.stderr()).toContain(
      'no tokens exist yet, so every request will be refused: create one with engram token create --user NAME',
    );
  });
});

describe('engram serve refuses to start', () => {
  it.each([['0.0.0.0'], ['192.168.1.20'], ['::']])('on %s without auth: exit 1 with a clear message', async (host) => {
    const { db, env } = setup();
    const run = await runEngram(['serve', '--host', host, '--port', '0', '--db', db], env);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      `refusing to serve on ${host} without authentication: anyone who can reach it could read and change your memory. ` +
        'Either keep the default --host 127.0.0.1, or start with --auth token and create tokens with ' +
        'engram token create --user NAME.\n',
    );
  });

  it('with an --allow-origin that is not an origin: usage error, exit 2', async () => {
    const { db, env } = setup();
    const run = await runEngram(['serve', '--allow-origin', 'evil.example', '--port', '0', '--db', db], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^error: option '--allow-origin <origin>' argument 'evil\.example' is invalid\. --allow-origin "evil\.example" is not an origin/,
    );
  });

  it('with --allow-origin null: usage error, exit 2, and a hint that works (not --allow-origin null)', async () => {
    const { db, env } = setup();
    const run = await runEngram(['serve', '--allow-origin', 'null', '--port', '0', '--db', db], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--allow-origin null cannot be allowed: browsers send Origin null from every page opened from a file or in ' +
        'a sandbox, wherever it came from. Serve the page from http://localhost or http://127.0.0.1 instead ' +
        '(always allowed), or use --auth token.',
    );
    expect(existsSync(db)).toBe(false);
  });

  it('with --json, prints where to connect as one JSON line', async () => {
    const { db, env } = setup();
    const served = await serve(process.execPath, [ENGRAM_CLI, 'serve', '--json', '--port', '0', '--db', db], env);
    const info = JSON.parse(served.banner) as Record<string, unknown>;
    expect(info).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/),
      auth: 'none',
      user: 'local',
      database: `SQLite ${db}`,
    });
    expect((await fetch(String(info.url).replace(/\/mcp$/, '/healthz'))).status).toBe(200);
  });

  it.each([
    ['--port', 'http'],
    ['--port', '70000'],
    ['--auth', 'basic'],
  ])('with %s %s: usage error, exit 2', async (flag, value) => {
    const { db, env } = setup();
    const run = await runEngram(['serve', flag, value, '--db', db], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });

  it('on a port already in use: exit 1, saying to choose another', async () => {
    const { db, env } = setup();
    const first = await serve(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', '--db', db], env);
    const port = new URL(first.url).port;
    const run = await runEngram(['serve', '--port', port, '--db', db], env);
    expect(run).toMatchObject({
      code: 1,
      stderr: `engram: port ${port} on 127.0.0.1 is already in use; choose another with --port.\n`,
    });
  });
});
