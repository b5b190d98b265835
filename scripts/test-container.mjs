/**
 * `npm run test:container`: the container image built from the Dockerfile and run for real
 * with rootful podman, since a volume that does not keep the memory is the usual way a
 * containerised server loses it. No container registry is reachable from these machines,
 * so container-base.sh (../shared/tools/, or ENGRAM_CONTAINER_BASE) first builds local
 * stand-ins of the node:*-bookworm-slim images. Then: the compose files parse and keep the
 * set-up's rules; the image builds; it refuses to serve an open memory on all interfaces;
 * a container on a volume turns healthy, runs as non-root with no native addon inside (its
 * SQLite is node:sqlite), serves MCP calls with a token
 * made by `engram token create` inside it; a new container on the same volume finds the
 * memory intact; and the image serves the machine's PostgreSQL (ENGRAM_TEST_DATABASE_URL's
 * server, in a database of its own). Containers, volumes, the image and the database are
 * removed afterwards, failed or not. Each phase prints how long it took. Never skipped: a
 * missing tool or database is a failure.
 */

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const id = `${process.pid}-${Date.now().toString(36)}`;
const image = `localhost/engram-test:${id}`;
const volume = `engram-test-${id}`;
const containers = [];
const databaseName = `engram_container_${id.replace(/\W/g, '_')}`;
const serverUrl = process.env.ENGRAM_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
let databaseMade = false;

/** Fails the test with a message saying what was expected. */
function check(condition, message) {
  if (!condition) throw new Error(`test:container: ${message}`);
}

/** Runs a command to completion; rejects with its output when it fails. */
function run(command, args, { env = process.env, quiet = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk) => {
      output += chunk;
      if (!quiet) process.stderr.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output.slice(-4000)}`));
    });
  });
}

let podmanEnv = process.env;
const podman = (...args) => run('podman', args, { env: podmanEnv });

/** Runs one phase and prints how long it took. */
async function phase(name, body) {
  const started = performance.now();
  try {
    return await body();
  } finally {
    console.log(`  ${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

function containerBaseScript() {
  const candidates = [
    process.env.ENGRAM_CONTAINER_BASE,
    join(root, '..', 'shared', 'tools', 'container-base.sh'),
    '/work/shared/tools/container-base.sh',
  ].filter(Boolean);
  const found = candidates.find((path) => existsSync(path));
  check(found, `container-base.sh not found (looked at ${candidates.join(', ')}); set ENGRAM_CONTAINER_BASE`);
  return found;
}

/** Parses a YAML file of this checkout (the compose files). */
function parseYaml(file) {
  try {
    return parse(readFileSync(join(root, file), 'utf8'));
  } catch (error) {
    throw new Error(`test:container: ${file} could not be parsed: ${error.message}`);
  }
}

function checkComposeFiles() {
  const compose = parseYaml('compose.yaml');
  const engram = compose.services.engram;
  check(
    engram.volumes.includes('engram-data:/data') && 'engram-data' in compose.volumes,
    'compose.yaml: /data on a named volume',
  );
  check(engram.environment.ENGRAM_AUTH === 'oauth', "compose.yaml: OAuth (on the image's ENGRAM_HOST, all interfaces)");
  check(engram.environment.ENGRAM_PUBLIC_URL.startsWith('https://'), 'compose.yaml: an https public URL');
  check(engram.environment.ENGRAM_TRUST_PROXY === '1', 'compose.yaml: the proxy in front is trusted');
  check(engram.ports === undefined, 'compose.yaml: Engram publishes no port, only the proxy does');
  check(compose.services.caddy.command.includes('--to engram:8787'), 'compose.yaml: Caddy forwards to Engram');
  const postgres = parseYaml('compose.postgres.yaml');
  check(
    postgres.services.engram.environment.ENGRAM_DATABASE_URL.includes('@postgres:5432/'),
    'compose.postgres.yaml: Engram on the postgres service',
  );
  check(
    postgres.services.engram.depends_on.postgres.condition === 'service_healthy',
    'compose.postgres.yaml: waits for PostgreSQL',
  );
  check('engram-postgres' in postgres.volumes, 'compose.postgres.yaml: the database on a named volume');
  return engram.environment;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a container of the image, detached; its name is remembered for the clean-up. */
async function startContainer(name, args, command = []) {
  containers.push(name);
  await podman('run', '-d', '--init', '--name', name, ...args, image, ...command);
  return name;
}

/**
 * Waits until the container's healthcheck passes. Podman schedules healthchecks with
 * systemd timers, which these machines lack, so the check is run here with
 * `podman healthcheck run`, the same command the timer runs; the status it records is
 * then read back with `podman inspect`.
 */
async function waitHealthy(container) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await podman('healthcheck', 'run', container);
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        const logs = await podman('logs', container).catch(() => '');
        throw new Error(`test:container: ${container} never turned healthy: ${error.message}\n${logs}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  const status = (await podman('inspect', '--format', '{{.State.Health.Status}}', container)).trim();
  check(status === 'healthy', `${container}'s health is ${JSON.stringify(status)}, not "healthy"`);
}

/** A token made inside the container, as a person would: the last line of `engram token create`. */
async function createToken(container, user) {
  const output = await podman(
    'exec',
    container,
    'engram',
    'token',
    'create',
    '--user',
    user,
    '--label',
    'container test',
  );
  const token = output.trim().split('\n').at(-1);
  check(token?.startsWith('engram_'), `engram token create printed no token:\n${output}`);
  return token;
}

/** Calls tools with the MCP SDK client over Streamable HTTP, with the token. */
async function withMcp(port, token, body) {
  const client = new Client({ name: 'container-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await body(async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      const text = result.content.map((block) => block.text ?? '').join('');
      check(!result.isError, `${name} failed: ${text}`);
      return text;
    });
  } finally {
    await client.close();
  }
}

const ENTRY = { name: 'topics/container', description: 'Where Engram runs', new: 'In a container, on a volume.' };

async function main() {
  console.log('test:container');
  const composeEnvironment = await phase('compose files', async () => checkComposeFiles());

  await phase('base images (container-base.sh)', async () => {
    const output = await run('bash', [containerBaseScript()]);
    const conf = /CONTAINERS_CONF=(\S+)/.exec(output)?.[1];
    check(conf, `container-base.sh printed no CONTAINERS_CONF:\n${output}`);
    podmanEnv = { ...process.env, CONTAINERS_CONF: conf };
  });

  await phase('build', async () => {
    // --format docker: the OCI format has no HEALTHCHECK, and podman would drop it.
    await podman('build', '--pull=never', '--format', 'docker', '-t', image, '.');
    const size = Number(await podman('image', 'inspect', '--format', '{{.Size}}', image));
    console.log(`    image ${image}: ${(size / 1e6).toFixed(0)} MB`);
    const labels = JSON.parse(await podman('inspect', '--format', '{{json .Config.Labels}}', image));
    const { mcpName } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const serverName = labels['io.modelcontextprotocol.server.name'];
    check(
      serverName && (mcpName === undefined || serverName === mcpName),
      `label io.modelcontextprotocol.server.name is ${serverName}, package.json's mcpName ${mcpName}`,
    );
  });

  await phase('refuses an open memory on all interfaces', async () => {
    const refused = await podman('run', '--rm', image, 'serve', '--host', '0.0.0.0', '--auth', 'none').then(
      () => undefined,
      (error) => error.message,
    );
    check(
      refused?.includes('refusing to serve on 0.0.0.0 without authentication'),
      `serve --auth none on 0.0.0.0 was not refused: ${refused}`,
    );
  });

  await phase('configured as compose.yaml configures it: OAuth at the public URL', async () => {
    const port = await freePort();
    const publicUrl = 'https://memory.example.test';
    const variables = Object.entries({ ...composeEnvironment, ENGRAM_PUBLIC_URL: publicUrl }).flatMap(
      ([name, value]) => ['-e', `${name}=${value}`],
    );
    const container = await startContainer(`engram-test-${id}-compose`, ['-p', `127.0.0.1:${port}:8787`, ...variables]);
    await waitHealthy(container);
    const metadata = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
    check(metadata.ok, `OAuth metadata answered ${metadata.status}`);
    const { resource } = await metadata.json();
    check(resource === `${publicUrl}/mcp`, `the OAuth resource is ${resource}, not ${publicUrl}/mcp`);
    await podman('rm', '--force', '--volumes', container);
  });

  await podman('volume', 'create', volume);
  const port = await freePort();
  const published = ['-p', `127.0.0.1:${port}:8787`, '-v', `${volume}:/data`];
  const token = await phase('run on a volume, healthy, MCP calls', async () => {
    const first = await startContainer(`engram-test-${id}-1`, published);
    await waitHealthy(first);
    const uid = (await podman('exec', first, 'id', '-u')).trim();
    check(uid !== '0', `the server runs as root (uid ${uid})`);
    await podman('exec', first, 'test', '-f', '/data/engram/memory.db');
    // No native addon in the image: its SQLite is node:sqlite, built into its Node.
    const addons = (await podman('exec', first, 'find', '/app', '-name', '*.node')).trim();
    check(addons === '', `the image holds a native addon: ${addons}`);
    const open = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body: '{}' });
    check(open.status === 401, `/mcp without a token answered ${open.status}, not 401`);
    const token = await createToken(first, 'ada');
    await withMcp(port, token, async (call) => {
      await call('memory_write', ENTRY);
      check(
        (await call('memory_open', { names: [ENTRY.name] })).includes(ENTRY.new),
        'memory_open does not show the write',
      );
    });
    await podman('stop', '--time', '10', first);
    // SIGTERM: Engram finishes what is in flight, closes the store and exits 0 (137 would be the SIGKILL after 10 s).
    const exitCode = (await podman('inspect', '--format', '{{.State.ExitCode}}', first)).trim();
    check(exitCode === '0', `the container stopped with exit code ${exitCode}, not 0 after SIGTERM`);
    await podman('rm', '--volumes', first);
    return token;
  });

  await phase('new container on the same volume', async () => {
    const second = await startContainer(`engram-test-${id}-2`, published);
    await waitHealthy(second);
    await withMcp(port, token, async (call) => {
      check(
        (await call('memory_open', { names: [ENTRY.name] })).includes(ENTRY.new),
        'the memory did not survive the container',
      );
    });
  });

  await phase('on PostgreSQL', async () => {
    const admin = new pg.Client({ connectionString: serverUrl, database: 'postgres' });
    await admin.connect().catch((error) => {
      throw new Error(
        `test:container: PostgreSQL at ${serverUrl} cannot be reached (${error.message}); .ci/run starts it`,
      );
    });
    await admin.query(`CREATE DATABASE ${databaseName}`);
    await admin.end();
    databaseMade = true;
    const url = new URL(serverUrl);
    url.pathname = `/${databaseName}`;
    const pgPort = await freePort();
    // The host's network, so that 127.0.0.1 is the machine's PostgreSQL; Engram on loopback.
    const container = await startContainer(`engram-test-${id}-pg`, [
      '--network',
      'host',
      ...['-e', `ENGRAM_DATABASE_URL=${url}`, '-e', 'ENGRAM_HOST=127.0.0.1', '-e', `ENGRAM_PORT=${pgPort}`],
    ]);
    // Healthy once it answers on its port, which its healthcheck reads from ENGRAM_PORT.
    await waitHealthy(container);
    const token = await createToken(container, 'ada');
    await withMcp(pgPort, token, async (call) => {
      await call('memory_write', ENTRY);
      check(
        (await call('memory_open', { names: [ENTRY.name] })).includes(ENTRY.new),
        'memory_open does not show the write on PostgreSQL',
      );
    });
  });
}

/** Removes what the test made, whatever happened; a failure here is reported, not hidden. */
async function cleanUp() {
  for (const container of containers)
    await podman('rm', '--force', '--volumes', '--time', '2', container).catch(() => {});
  await podman('volume', 'rm', '--force', volume).catch(() => {});
  await podman('rmi', '--force', image).catch(() => {});
  if (databaseMade) {
    const admin = new pg.Client({ connectionString: serverUrl, database: 'postgres' });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await admin.end();
  }
}

const started = performance.now();
let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
} finally {
  await phase('clean-up', cleanUp).catch((error) => {
    failed = true;
    console.error(`test:container: clean-up failed: ${error.message}`);
  });
}
console.log(`test:container ${failed ? 'FAILED' : 'passed'} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = failed ? 1 : 0;
