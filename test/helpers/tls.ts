/**
 * TLS for tests: a throwaway certificate authority and a server certificate it signed for
 * localhost, 127.0.0.1, ::1 and engram.test with its subdomains (names no resolver knows,
 * for tests that resolve them themselves), made with the openssl command at test time (never kept in
 * git), and an HTTPS server on 127.0.0.1 that uses them. A client trusts the server by
 * passing `ca` (Engram's client metadata fetcher, the MCP SDK through NODE_EXTRA_CA_CERTS
 * or `ca`, a native TLS `engram serve`).
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export interface TestCertificates {
  /** The test CA's certificate (PEM): what a client trusts. */
  readonly ca: string;
  /** The server certificate (PEM) for localhost, 127.0.0.1, ::1, engram.test and *.engram.test, signed by the CA. */
  readonly cert: string;
  /** The server certificate's private key (PEM). */
  readonly key: string;
}

let made: TestCertificates | undefined;

function openssl(folder: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: folder, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The test CA and server certificate, made once per test process (in a folder removed at once). */
export function testCertificates(): TestCertificates {
  if (made) return made;
  const folder = mkdtempSync(join(tmpdir(), 'engram-tls-'));
  try {
    made = makeCertificates(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return made;
}

function makeCertificates(folder: string): TestCertificates {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(folder, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '7',
    '-subj',
    '/CN=Engram test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl(folder, ['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(
    join(folder, 'server.ext'),
    [
      'subjectAltName=DNS:localhost,DNS:engram.test,DNS:*.engram.test,IP:127.0.0.1,IP:::1',
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  );
  openssl(folder, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-set_serial',
    `0x${Date.now().toString(16)}`,
    '-days',
    '7',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  ]);
  return {
    ca: readFileSync(join(folder, 'ca.pem'), 'utf8'),
    cert: readFileSync(join(folder, 'server.pem'), 'utf8'),
    key: readFileSync(join(folder, 'server.key'), 'utf8'),
  };
}

/** The three as files (`engram serve --tls-cert/--tls-key`, NODE_EXTRA_CA_CERTS), removed when the test ends. */
export function testCertificateFiles(): { readonly ca: string; readonly cert: string; readonly key: string } {
  const certificates = testCertificates();
  const folder = mkdtempSync(join(tmpdir(), 'engram-tls-files-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  const files = { ca: join(folder, 'ca.pem'), cert: join(folder, 'server.pem'), key: join(folder, 'server.key') };
  for (const name of ['ca', 'cert', 'key'] as const) writeFileSync(files[name], certificates[name]);
  return files;
}

export interface TestHttpsServer {
  /** e.g. `https://127.0.0.1:40123` (the certificate also names localhost). */
  readonly origin: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 with the test certificate; closed (connections cut) when the test ends. */
export async function startHttpsServer(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestHttpsServer> {
  const { cert, key } = testCertificates();
  const server = createServer({ cert, key }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  onTestFinished(close);
  return { origin: `https://127.0.0.1:${port}`, port, server, close };
}
