/**
 * The MCP floor for the HTTP benchmark: the least work any MCP server keeping its memory
 * in a database does for a tool call, with nothing else, run as its own process like
 * `engram serve`. The bare ceiling (bare-server.ts) answers a fixed body and touches no
 * data; a target set against it alone cannot tell what is Engram's cost from what any such
 * server must pay. This one reads the body, finds the caller's user from its bearer token
 * (a lookup in memory; no token, the one local user), parses the JSON-RPC request and
 * answers a JSON result: an open with the entry's index line and body, an append with its
 * new index line once durable. What the database does for each is floor-sqlite.ts's or
 * floor-postgres.ts's; with `sqlite-schema`, Engram's own statements on Engram's schema
 * (floor-engram-schema.ts), to tell what that schema costs the same server.
 *
 * argv: `sqlite <database file>`, `sqlite-schema <database file>` or `postgres <database
 * URL>` (an empty database of its own), the local user's entries, and the users with a token each (many-users.ts). Prints
 * `listening <port>` once ready.
 */

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { indexLine } from '../src/memory/model/index-lines.js';
import { floorEntry, subjects } from './content.js';
import { openEngramSchemaFloor } from './floor-engram-schema.js';
import type { FloorMemory, FloorSeed } from './floor-memory.js';
import { openPostgresFloor } from './floor-postgres.js';
import { openSqliteFloor } from './floor-sqlite.js';
import { benchUser, floorToken, USER_ENTRIES } from './many-users.js';

const [backend, location, entries, users] = [
  process.argv[2],
  process.argv[3],
  Number(process.argv[4]),
  Number(process.argv[5]),
];
if (
  (backend !== 'sqlite' && backend !== 'sqlite-schema' && backend !== 'postgres') ||
  location === undefined ||
  !Number.isInteger(entries) ||
  entries <= 0 ||
  !Number.isInteger(users) ||
  users < 0
) {
  throw new Error('usage: floor-server sqlite|sqlite-schema|postgres <database file or URL> <entries> <users>');
}

const LOCAL = 'local';
const seedOf = (count: number) => subjects(0, count).map(floorEntry);
const seed: FloorSeed = [
  { user: LOCAL, entries: seedOf(entries) },
  ...Array.from({ length: users }, (_, at) => ({ user: benchUser(at), entries: seedOf(USER_ENTRIES) })),
];
const userOfToken = new Map(Array.from({ length: users }, (_, at) => [`Bearer ${floorToken(at)}`, benchUser(at)]));
const memory: FloorMemory =
  backend === 'sqlite'
    ? openSqliteFloor(location, seed)
    : backend === 'sqlite-schema'
      ? openEngramSchemaFloor(location, seed)
      : await openPostgresFloor(location, seed);

interface ToolCall {
  readonly id: number;
  readonly params: { readonly name: string; readonly arguments: { names?: string[]; name?: string; new?: string } };
}

function answer(res: ServerResponse, id: number, text: string): void {
  const body = JSON.stringify({ result: { content: [{ type: 'text', text }], isError: false }, jsonrpc: '2.0', id });
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function call(user: string, { params }: ToolCall): Promise<string> {
  if (params.name === 'memory_write') {
    return indexLine(await memory.append(user, params.arguments.name!, params.arguments.new!));
  }
  const entry = await memory.open(user, params.arguments.names![0]!);
  return `${indexLine(entry)}\n${entry.body}`;
}

const server = createServer((req, res) => {
  const authorization = req.headers.authorization;
  const user = authorization === undefined ? LOCAL : userOfToken.get(authorization);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (user === undefined) {
      res.writeHead(401).end();
      return;
    }
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ToolCall;
    call(user, request).then(
      (text) => answer(res, request.id, text),
      (error: unknown) => {
        process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
        res.writeHead(500).end();
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => void memory.close().finally(() => process.exit(0))));
