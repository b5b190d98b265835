/**
 * The SQLite peers of the stdio benchmark (mcp-memory-keeper, memorix) are not Engram's
 * dependencies: `npm ci` must stay fast and build no extra native module. They are
 * installed here instead, at pinned versions, into a folder of the system's temporary
 * directory that later runs reuse, once per benchmark run. Their optional dependencies
 * (memorix's local embedding models, which download a model) are left out, and their
 * install scripts are not run: the one native module they need, better-sqlite3, is pinned
 * to Engram's own version and given Engram's already built binary.
 */

import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The peers, at the versions measured. */
export const PEER_VERSIONS = { 'mcp-memory-keeper': '0.14.1', memorix: '1.0.7' } as const;

export type PeerPackage = keyof typeof PEER_VERSIONS;

/** Where the peers are installed, shared by every run on this machine. */
export const PEERS_FOLDER = join(tmpdir(), 'engram-bench-peers');

const requireHere = createRequire(import.meta.url);

/** Engram's better-sqlite3: its version and its built binary. */
function engramSqlite(): { version: string; binary: string } {
  const manifest = requireHere.resolve('better-sqlite3/package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return { version, binary: join(dirname(manifest), 'build', 'Release', 'better_sqlite3.node') };
}

export type PeerInstall =
  | { readonly ok: true; readonly folder: string; readonly sqliteVersion: string }
  | { readonly ok: false; readonly reason: string };

let installed: Promise<PeerInstall> | undefined;

/** Installs the peers unless this exact set is already there; at most once per run. */
export function installPeers(): Promise<PeerInstall> {
  installed ??= install().catch((error: unknown) => {
    const reason = `npm install of ${Object.entries(PEER_VERSIONS)
      .map(([name, version]) => `${name}@${version}`)
      .join(' and ')} into ${PEERS_FOLDER} failed: ${error instanceof Error ? error.message : String(error)}`;
    process.stderr.write(`bench: ${reason}; these peers are reported as not measured\n`);
    return { ok: false, reason };
  });
  return installed;
}

async function install(): Promise<PeerInstall> {
  const sqlite = engramSqlite();
  const manifest = `${JSON.stringify(
    { private: true, dependencies: { ...PEER_VERSIONS, 'better-sqlite3': sqlite.version } },
    null,
    2,
  )}\n`;
  const ready = join(PEERS_FOLDER, 'installed.json');
  const target = join(PEERS_FOLDER, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(ready) && readFileSync(ready, 'utf8') === manifest && existsSync(target)) {
    return { ok: true, folder: PEERS_FOLDER, sqliteVersion: sqlite.version };
  }
  process.stderr.write(`bench: installing the stdio peers into ${PEERS_FOLDER} (once; later runs reuse it)…\n`);
  mkdirSync(PEERS_FOLDER, { recursive: true });
  writeFileSync(join(PEERS_FOLDER, 'package.json'), manifest);
  await new Promise<void>((resolve, reject) => {
    execFile(
      'npm',
      ['install', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: PEERS_FOLDER, timeout: 600_000, maxBuffer: 1 << 24 },
      (error, _stdout, stderr) => (error ? reject(new Error(npmFailure(stderr, error))) : resolve()),
    );
  });
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(sqlite.binary, target);
  writeFileSync(ready, manifest);
  return { ok: true, folder: PEERS_FOLDER, sqliteVersion: sqlite.version };
}

/** npm's reason in one line: its error's own line (e.g. "FetchError: request to … failed"), else its first two. */
function npmFailure(stderr: string, error: Error): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^npm (error|ERR!)/, '').trim())
    .filter(Boolean);
  return lines.find((line) => /Error\b/.test(line)) ?? (lines.slice(0, 2).join('; ') || error.message);
}

/** The installed file of a peer package, e.g. its server script. */
export function peerFile(folder: string, name: PeerPackage, ...path: string[]): string {
  return join(folder, 'node_modules', name, ...path);
}
