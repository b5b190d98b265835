/**
 * One side of the SQLite drivers benchmark (sqlite-drivers.ts), in a process of its own,
 * since each driver runs on its own Node: better-sqlite3 on the Node running the
 * benchmark, node:sqlite on Node 22. It opens a store with the driver it is given, seeds
 * it, says it is ready on its first line, then runs a block of calls through the tool
 * handler for every line it reads (`{"rounds":N,"from":K}`) and answers with the samples
 * in milliseconds, one line of JSON. It stops when its stdin ends.
 */

import { createInterface } from 'node:readline';
import { createMemory } from '../src/memory/memory.js';
import { createToolHandler, type ToolResult } from '../src/memory/tools/handler.js';
import type { SqliteDriverName } from '../src/storage/sqlite/drivers.js';
import { openSqliteStore } from '../src/storage/sqlite/index.js';
import { createTransfer } from '../src/transfer/transfer.js';
import { appendedLine, exportDocument, subject, subjects } from './content.js';
import { timeOnce } from './stats.js';

const [driver, path, entriesArg] = process.argv.slice(2);
const entries = Number(entriesArg);
const caller = { user: 'local', label: 'bench' };

function check(result: ToolResult, what: string): void {
  if (result.isError) throw new Error(`${what} failed during the benchmark: ${result.text}`);
}

const store = await openSqliteStore({ path: path!, driver: driver as SqliteDriverName });
const memory = createMemory({ store, policy: { userCap: 2 ** 40, maxEntries: 2 ** 30, historyCap: 2 ** 40 } });
const handler = createToolHandler(memory);
await createTransfer(memory).import(caller, exportDocument(subjects(0, entries)), { mode: 'merge' });
await memory.search(caller, 'subject');
process.stdout.write(`${JSON.stringify({ driver: store.driver, node: process.version })}\n`);

let serial = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const { rounds, from } = JSON.parse(line) as { rounds: number; from: number };
  const samples = { append: [] as number[], open: [] as number[], index: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    const pick = ((from + round) * 7919) % entries;
    samples.append.push(
      await timeOnce(async () =>
        check(
          await handler(caller, 'memory_write', { name: subject(pick).name, new: appendedLine(serial++) }),
          'append',
        ),
      ),
    );
    samples.open.push(
      await timeOnce(async () =>
        check(await handler(caller, 'memory_open', { names: [subject((pick + 1) % entries).name] }), 'open'),
      ),
    );
    samples.index.push(await timeOnce(async () => check(await handler(caller, 'memory_open', {}), 'index')));
  }
  process.stdout.write(`${JSON.stringify(samples)}\n`);
}
await store.close();
