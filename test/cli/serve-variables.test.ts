/**
 * `engram serve` configured by variables, as a container or a service manager configures
 * it: ENGRAM_HOST, ENGRAM_PORT, ENGRAM_AUTH, ENGRAM_PUBLIC_URL and ENGRAM_TRUST_PROXY stand
 * in for their flags; a flag given wins over its variable, a variable over the config file;
 * a value the flag would refuse stops it before anything is opened, with a usage error
 * that names the variable; the safety rules hold whichever way a setting came.
 */

import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/program.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { serveInProcess } from './fixtures.js';

/** `engram serve --json --db FILE ARGS` in this process with `variables` set, on a fresh folder. */
function serveWith(variables: Record<string, string>, args: string[] = [], config?: unknown) {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const configArgs = config === undefined ? [] : ['--config', dir.config(config)];
  const env = { ...childEnv(dir.path), ...variables };
  return { db, ...serveInProcess(main, ['--json', '--db', db, ...configArgs, ...args], env) };
}

async function connectLine(served: ReturnType<typeof serveWith>): Promise<Record<string, unknown>> {
  await served.listening;
  return JSON.parse(served.out.stdout.split('\n')[0]!) as Record<string, unknown>;
}

async function stopped(served: ReturnType<typeof serveWith>): Promise<void> {
  served.stop('done');
  expect(await served.exited).toBe(0);
}

describe('engram serve configured by ENGRAM_* variables', () => {
  it('listens where ENGRAM_HOST and ENGRAM_PORT say, with the auth ENGRAM_AUTH names', async () => {
    const served = serveWith({ ENGRAM_HOST: '127.0.0.1', ENGRAM_PORT: '0', ENGRAM_AUTH: 'token' });
    const line = await connectLine(served);
    expect(line).toMatchObject({ auth: 'token' });
    expect(String(line.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(String(line.url)).not.toContain(':8787/');
    const refused = await fetch(String(line.url), { method: 'POST', body: '{}' });
    expect(refused.status).toBe(401);
    await refused.text();
    await stopped(served);
  });

  it('lets a flag given win over its variable', async () => {
    const served = serveWith({ ENGRAM_PORT: '0', ENGRAM_AUTH: 'token' }, ['--auth', 'none']);
    expect(await connectLine(served)).toMatchObject({ auth: 'none', user: 'local' });
    await stopped(served);
  });

  it('takes ENGRAM_PUBLIC_URL over the config file’s publicUrl', async () => {
    const served = serveWith({ ENGRAM_PORT: '0', ENGRAM_PUBLIC_URL: 'http://localhost:9911' }, [], {
      publicUrl: 'http://localhost:9922',
    });
    expect(await connectLine(served)).toMatchObject({ publicUrl: 'http://localhost:9911/mcp' });
    await stopped(served);
  });

  it('reads the client address from X-Forwarded-For only with ENGRAM_TRUST_PROXY=1', async () => {
    for (const [trust, logged] of [
      ['1', true],
      ['0', false],
    ] as const) {
      const served = serveWith({ ENGRAM_PORT: '0', ENGRAM_TRUST_PROXY: trust });
      const line = await connectLine(served);
      const health = await fetch(new URL('/healthz', String(line.url)), {
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      await health.text();
      await stopped(served);
      expect(served.out.stderr.includes('client=203.0.113.9')).toBe(logged);
    }
  });

  it('keeps its safety rules whichever way a setting came: no open memory on all interfaces', async () => {
    const served = serveWith({ ENGRAM_HOST: '0.0.0.0', ENGRAM_PORT: '0' });
    expect(await served.exited).toBe(1);
    expect(served.out.stderr).toMatch(/^refusing to serve on 0\.0\.0\.0 without authentication/);
    expect(existsSync(served.db)).toBe(false);
  });

  it.each([
    ['ENGRAM_PORT', 'http', 'ENGRAM_PORT=http: give a port number from 0 to 65535. Or unset it.'],
    ['ENGRAM_PORT', '70000', 'ENGRAM_PORT=70000: give a port number from 0 to 65535. Or unset it.'],
    ['ENGRAM_AUTH', 'open', 'ENGRAM_AUTH=open: give none, token, oauth. Or unset it.'],
    ['ENGRAM_TRUST_PROXY', 'yes', 'ENGRAM_TRUST_PROXY=yes: give 1 or 0 (or true or false). Or unset it.'],
    ['ENGRAM_METRICS', 'on', 'ENGRAM_METRICS=on: give 1 or 0 (or true or false). Or unset it.'],
    ['ENGRAM_LOG_FORMAT', 'xml', 'ENGRAM_LOG_FORMAT=xml: give human or json. Or unset it.'],
  ])('refuses %s=%s before opening anything, naming the variable (exit 2)', async (name, value, message) => {
    const served = serveWith({ ENGRAM_PORT: '0', [name]: value });
    expect(await served.exited).toBe(2);
    expect(served.out.stdout).toBe('');
    expect(served.out.stderr).toContain(message);
    expect(existsSync(served.db)).toBe(false);
  });

  it('refuses an ENGRAM_PUBLIC_URL its flag would refuse, saying why', async () => {
    const served = serveWith({ ENGRAM_PORT: '0', ENGRAM_PUBLIC_URL: 'ftp://memory.example.com' });
    expect(await served.exited).toBe(2);
    expect(served.out.stderr).toMatch(/^engram: ENGRAM_PUBLIC_URL=ftp:\/\/memory\.example\.com: .+ Or unset it\.\n/);
    expect(existsSync(served.db)).toBe(false);
  });

  it('serves /metrics with --metrics, ENGRAM_METRICS=1 or the config file, the metrics token from ENGRAM_METRICS_TOKEN', async () => {
    const token = 'a-metrics-token-of-32-characters';
    const runs = [
      serveWith({ ENGRAM_PORT: '0' }, ['--metrics']),
      serveWith({ ENGRAM_PORT: '0', ENGRAM_METRICS: '1', ENGRAM_METRICS_TOKEN: token }),
      serveWith({ ENGRAM_PORT: '0' }, [], { metrics: true, metricsToken: token }),
      serveWith({ ENGRAM_PORT: '0', ENGRAM_METRICS: '0' }, [], { metrics: true }),
      serveWith({ ENGRAM_PORT: '0' }),
    ];
    const statuses: number[][] = [];
    for (const served of runs) {
      const url = new URL('/metrics', String((await connectLine(served)).url));
      const local = await fetch(url);
      await local.text();
      const forwarded = await fetch(url, {
        headers: { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${token}` },
      });
      await forwarded.text();
      await stopped(served);
      statuses.push([local.status, forwarded.status]);
    }
    expect(statuses).toEqual([
      [200, 403],
      [200, 200],
      [200, 200],
      [404, 404],
      [404, 404],
    ]);
  });

  it('refuses a metrics token too short to be safe, before opening anything', async () => {
    const served = serveWith({ ENGRAM_PORT: '0', ENGRAM_METRICS_TOKEN: 'short' }, ['--metrics']);
    expect(await served.exited).toBe(2);
    expect(served.out.stderr).toMatch(/ENGRAM_METRICS_TOKEN: a metrics token is at least 24 printable characters/);
    expect(existsSync(served.db)).toBe(false);
  });

  it('logs JSON lines with ENGRAM_LOG_FORMAT=json or the config\'s "logFormat", a flag winning over both', async () => {
    const runs = [
      serveWith({ ENGRAM_PORT: '0', ENGRAM_LOG_FORMAT: 'json' }),
      serveWith({ ENGRAM_PORT: '0' }, [], { logFormat: 'json' }),
      serveWith({ ENGRAM_PORT: '0', ENGRAM_LOG_FORMAT: 'json' }, ['--log-format', 'human']),
    ];
    const formats: string[] = [];
    for (const served of runs) {
      const health = await fetch(new URL('/healthz', String((await connectLine(served)).url)));
      await health.text();
      await stopped(served);
      const line = served.out.stderr.split('\n').find((text) => text.includes('/healthz')) ?? '';
      formats.push(
        line.startsWith('{')
          ? (JSON.parse(line) as { route: string }).route
          : line.replace(/^.* (GET \/healthz) .*$/, '$1'),
      );
    }
    expect(formats).toEqual(['/healthz', '/healthz', 'GET /healthz']);
  });

  it('names /metrics in its connection help when metrics are on', async () => {
    const dir = tempDir();
    const served = serveInProcess(
      main,
      ['--db', dir.file('memory.db'), '--port', '0', '--metrics'],
      childEnv(dir.path, { ENGRAM_METRICS_TOKEN: 'a-metrics-token-of-32-characters' }),
    );
    await vi.waitFor(() => expect(served.out.stdout).toContain('Stop with Ctrl-C.'), { timeout: 20_000 });
    expect(served.out.stdout).toMatch(
      /\n {2}Metrics: {9}http:\/\/127\.0\.0\.1:\d+\/metrics \(Prometheus; from this machine, or with the metrics token\)\n/,
    );
    served.stop('done');
    expect(await served.exited).toBe(0);
  });
});
