/**
 * The MCP floor for the HTTP benchmark: the least work any MCP server keeping its memory
 * in SQLite does for a tool call, with nothing else, run as its own process like `engram
 * serve`. The bare ceiling (bare-server.ts) answers a fixed body and touches no data; a
 * target set against it alone cannot tell what is Engram's cost from what any such server
 * must pay. This one reads the body, parses the JSON-RPC request and answers a JSON result:
 * an open is one indexed read of the entry's latest revision; an append reads the body,
 * then saves the same rows as the in-process fair floor (a new revision, the entry's head,
 * the user's usage), durably (WAL, synchronous=FULL), the appends that arrive together
 * sharing one commit (group commit), each answered once its commit is on disk.
 *
 * argv: the database file (created and seeded here) and the number of entries. Prints
 * `listening <port>` once ready.
 */

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { indexLine } from '../src/core/index-lines.js';
import { bodyOf, subject } from './content.js';

const [path, count] = [process.argv[2], Number(process.argv[3])];
if (path === undefined || !Number.isInteger(count) || count <= 0) {
  throw new Error('usage: floor-server <database file> <entries>');
}

const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`
  CREATE TABLE entries (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, description TEXT NOT NULL,
    head INTEGER NOT NULL, size INTEGER NOT NULL) STRICT;
  CREATE TABLE revisions (id INTEGER PRIMARY KEY, entry_id INTEGER NOT NULL, at INTEGER NOT NULL, body TEXT NOT NULL) STRICT;
  CREATE TABLE usage (user TEXT PRIMARY KEY, bytes INTEGER NOT NULL) STRICT;
  INSERT INTO usage VALUES ('local', 0);
`);
const addRevision = db.prepare('INSERT INTO revisions (entry_id, at, body) VALUES (?, ?, ?)');
const addEntry = db.prepare('INSERT INTO entries (id, name, description, head, size) VALUES (?, ?, ?, ?, ?)');
const read = db.prepare(`SELECT entries.id, name, description, size, body FROM entries
  JOIN revisions ON revisions.id = entries.head WHERE name = ?`);
const moveHead = db.prepare('UPDATE entries SET head = ?, size = ? WHERE id = ?');
const addUsage = db.prepare('UPDATE usage SET bytes = bytes + ? WHERE user = ?');
db.transaction(() => {
  for (let index = 0; index < count; index++) {
    const { name, description } = subject(index);
    const body = bodyOf(subject(index));
    const revision = addRevision.run(index, Date.now(), body).lastInsertRowid;
    addEntry.run(index, name, description, revision, body.length);
  }
})();

interface EntryRow {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly size: number;
  readonly body: string;
}

interface ToolCall {
  readonly id: number;
  readonly params: { readonly name: string; readonly arguments: { names?: string[]; name?: string; new?: string } };
}

function answer(res: ServerResponse, id: number, text: string): void {
  const body = JSON.stringify({ result: { content: [{ type: 'text', text }], isError: false }, jsonrpc: '2.0', id });
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The appends waiting for the next commit, answered once it is durable. */
let waiting: { call: ToolCall; res: ServerResponse }[] = [];

const commit = db.transaction((calls: readonly ToolCall[]) =>
  calls.map((call) => {
    const row = read.get(call.params.arguments.name) as EntryRow;
    const body = `${row.body}${call.params.arguments.new}\n`;
    const revision = addRevision.run(row.id, Date.now(), body).lastInsertRowid;
    moveHead.run(revision, body.length, row.id);
    addUsage.run(body.length - row.body.length, 'local');
    return indexLine({ ...row, size: body.length });
  }),
);

function commitWaiting(): void {
  const batch = waiting;
  waiting = [];
  const lines = commit(batch.map((item) => item.call));
  for (const [index, item] of batch.entries()) answer(item.res, item.call.id, lines[index]!);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ToolCall;
    if (call.params.name === 'memory_write') {
      if (waiting.length === 0) setImmediate(commitWaiting);
      waiting.push({ call, res });
      return;
    }
    const row = read.get(call.params.arguments.names![0]) as EntryRow;
    answer(res, call.id, `${indexLine(row)}\n${row.body}`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
