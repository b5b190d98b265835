/**
 * `engram serve` set up to be reached from elsewhere, as a person starts it (the built
 * CLI): native TLS serves https and prints an https URL; every unsafe or wrong public
 * setup is refused at startup with a message that says what to pass, before the database
 * is created.
 */

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { childEnv, ENGRAM_CLI, runEngram, tempDir } from '../helpers/engram.js';
import { testCertificateFiles, testCertificates } from '../helpers/tls.js';
import { raw } from './fixtures.js';

function setup(config?: unknown) {
  const dir = tempDir();
  const db = dir.file('m.db');
  const args = config === undefined ? ['--db', db] : ['--db', db, '--config', dir.config(config)];
  return { dir, db, args, env: childEnv(dir.path) };
}

/** Runs `engram serve ARGS`, which must be refused with exit code `code`, create no database, and say `message`. */
async function expectRefusedStart(
  args: readonly string[],
  code: 1 | 2,
  message: RegExp,
  config?: unknown,
): Promise<void> {
  const { db, env, args: common } = setup(config);
  const run = await runEngram(['serve', '--port', '0', ...args, ...common], env);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code, stdout: '' });
  expect(run.stderr).toMatch(message);
  expect(existsSync(db)).toBe(false);
}

/**
 * Starts `engram serve ARGS --port 0` (with `config` as its config file) and resolves with
 * what it printed on stdout up to the line `last` accepts (by default the first); the
 * server is killed when the test ends.
 */
async function startServe(
  args: readonly string[],
  { config, last = () => true }: { config?: unknown; last?: (line: string) => boolean } = {},
): Promise<string> {
  const { args: common, env } = setup(config);
  const child = spawn(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', ...args, ...common], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onTestFinished(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  return new Promise<string>((resolve, reject) => {
    let printed = '';
    createInterface({ input: child.stdout! }).on('line', (line) => {
      printed += `${line}\n`;
      if (last(line)) resolve(printed);
    });
    exited.then((code) => reject(new Error(`engram serve exited with ${code}`)));
  });
}

function healthz(url: string, ca: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca }, (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('engram serve --tls-cert --tls-key', () => {
  it('serves https, prints an https URL, and answers a client that trusts the certificate', async () => {
    const files = testCertificateFiles();
    const { ca } = testCertificates();
    const line = await startServe(['--json', '--tls-cert', files.cert, '--tls-key', files.key]);
    const { url } = JSON.parse(line) as { url: string };
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await expect(healthz(url.replace(/\/mcp$/, '/healthz'), ca)).resolves.toEqual({
      status: 200,
      text: '{"status":"ok"}',
    });
  });
});

describe('engram serve --public-url', () => {
  it('prints the public /mcp URL beside the listening one, and answers to the public host', async () => {
    const line = await startServe(['--json', '--public-url', 'https://memory.example.com/']);
    const info = JSON.parse(line) as { url: string; publicUrl: string };
    expect(info.publicUrl).toBe('https://memory.example.com/mcp');
    const port = Number(new URL(info.url).port);
    const status = (host: string) => raw(port, { path: '/healthz', headers: { Host: host } }).then((r) => r.status);
    expect(await status('memory.example.com')).toBe(200);
    expect(await status('evil.example')).toBe(403);
  });

  it('takes the public URL from the config file, and says where to point the assistants', async () => {
    const banner = await startServe([], {
      config: { publicUrl: 'https://memory.example.com' },
      last: (line) => line.includes('Stop with Ctrl-C.'),
    });
    expect(banner).toContain(
      '  Public URL:      https://memory.example.com/mcp (give this one to ChatGPT and Claude)\n',
    );
  });
});

describe('engram serve refuses a public setup that is unsafe or wrong', () => {
  it.each([['0.0.0.0'], ['192.168.1.20'], ['::']])(
    '--auth oauth on %s without a public URL: exit 1, saying exactly what to pass',
    async (host) => {
      await expectRefusedStart(
        ['--auth', 'oauth', '--host', host],
        1,
        new RegExp(
          `^refusing to serve --auth oauth on ${host.replace(/\./g, '\\.')} without an https public URL: sign-ins, ` +
            'codes and tokens must not cross the network in clear text\\. Pass --public-url https://YOUR-HOST ',
        ),
      );
    },
  );

  it('--auth oauth beyond loopback with an http:// public URL: exit 1', async () => {
    await expectRefusedStart(
      ['--auth', 'oauth', '--host', '0.0.0.0', '--public-url', 'http://memory.example.com'],
      1,
      /^refusing --public-url http:\/\/memory\.example\.com on 0\.0\.0\.0: an http:\/\/ public URL is accepted only /,
    );
  });

  it('an http:// --public-url beyond loopback: exit 1, saying to give an https URL', async () => {
    await expectRefusedStart(
      ['--auth', 'token', '--host', '0.0.0.0', '--public-url', 'http://memory.example.com'],
      1,
      /^refusing --public-url http:\/\/memory\.example\.com on 0\.0\.0\.0: an http:\/\/ public URL is accepted only for a server on loopback \(--host 127\.0\.0\.1\) reached on this computer .*\. Give the https:\/\/ URL clients reach, /,
    );
  });

  it('an http:// --public-url off this computer on a loopback server (a proxy or tunnel in front): exit 1, saying to put TLS in front', async () => {
    await expectRefusedStart(
      ['--auth', 'oauth', '--public-url', 'http://memory.example.com'],
      1,
      /^refusing --public-url http:\/\/memory\.example\.com on 127\.0\.0\.1: .*Give the https:\/\/ URL clients reach, with TLS put in front: /,
    );
  });

  it('the same from the config file', async () => {
    await expectRefusedStart(
      ['--auth', 'token', '--host', '0.0.0.0'],
      1,
      /^refusing --public-url http:\/\/memory\.example\.com on 0\.0\.0\.0: /,
      { publicUrl: 'http://memory.example.com' },
    );
  });

  it.each([['https://memory.example.com/engram'], ['memory.example.com'], ['https://memory.example.com/?x=1']])(
    '--public-url %s: usage error, exit 2, with an example',
    async (value) => {
      await expectRefusedStart(
        ['--public-url', value],
        2,
        /is not an origin: .*for example --public-url https:\/\/memory\.example\.com/,
      );
    },
  );

  it('--tls-cert without --tls-key: usage error, exit 2', async () => {
    const files = testCertificateFiles();
    await expectRefusedStart(['--tls-cert', files.cert], 2, /^engram: --tls-cert needs --tls-key: /);
    await expectRefusedStart(['--tls-key', files.key], 2, /^engram: --tls-key needs --tls-cert: /);
  });

  it('a certificate file that cannot be read: exit 1, naming the file', async () => {
    const missing = '/nonexistent/engram-cert.pem';
    const files = testCertificateFiles();
    await expectRefusedStart(
      ['--tls-cert', missing, '--tls-key', files.key],
      1,
      /^cannot read --tls-cert \/nonexistent\/engram-cert\.pem: ENOENT/,
    );
    await expectRefusedStart(
      ['--tls-cert', files.cert, '--tls-key', missing],
      1,
      /^cannot read --tls-key \/nonexistent\/engram-cert\.pem: ENOENT/,
    );
  });

  it('files that are not a certificate and its key: exit 1, naming both', async () => {
    const dir = tempDir();
    const garbage = dir.file('garbage.pem');
    writeFileSync(garbage, 'not a PEM file\n');
    const files = testCertificateFiles();
    await expectRefusedStart(
      ['--tls-cert', garbage, '--tls-key', files.key],
      1,
      new RegExp(`^cannot serve https with --tls-cert ${garbage} and --tls-key ${files.key}: .*both must be PEM files`),
    );
    // The CA's certificate with the server's key: a pair that does not match.
    await expectRefusedStart(
      ['--tls-cert', files.ca, '--tls-key', files.key],
      1,
      /^cannot serve https with --tls-cert .*key values mismatch/,
    );
  });
});
