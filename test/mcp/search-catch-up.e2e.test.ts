/**
 * The built servers bring the search index up to date on their own after writes, with no
 * search asking for it: `engram serve` in its worker thread (search-worker.ts), which runs
 * from its source text and so must be left runnable by the CLI's bundle, and `engram stdio`
 * on its event loop (its one client's calls come one at a time). A worker that cannot start
 * hands the catch-up back to the event loop and warns, so writes and searches still work
 * and only the warning shows that the worker never ran: the bundled worker called the
 * bundle's own __require, undefined in the worker, and every start of `engram serve` said
 * "search indexing moved back to the main thread".
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { childEnv, ENGRAM_CLI, searchBacklogIn, tempDir } from '../helpers/engram.js';

const WRITES = [10, 11, 12, 13, 14];

/** The JSON-RPC call of write `id`. */
function writeCall(id: number) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'memory_write', arguments: { name: `topics/t${id}`, new: `zebra${id} tea`, description: 'd' } },
  };
}

/** Starts `engram <command>` on `db`, keeping what it says on stderr. */
function start(
  command: string[],
  db: string,
): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const dir = tempDir();
  const child = spawn(process.execPath, [ENGRAM_CLI, ...command, '--db', db], {
    env: childEnv(dir.path),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Once it has ended and everything it wrote to stderr has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, stderr: () => stderr, exited };
}

/**
 * Waits until the index has caught up with every write, before the server is stopped. Where
 * it has a worker, only the worker catches up then, unless the worker failed: it warned
 * first, then handed the catch-up back to the event loop. So once the index has caught up,
 * a failed worker's warning is written, and it is read once the server has ended (`exited`):
 * "no warning" after that means the worker ran, however slow the machine.
 */
async function caughtUp(db: string): Promise<void> {
  for (let waited = 0; searchBacklogIn(db) !== 0; waited += 50) {
    if (waited > 20_000) throw new Error('the index never caught up');
    await sleep(50);
  }
}

it('engram serve brings the search index up to date in its worker, with no warning', async () => {
  const db = tempDir().file('memory.db');
  const { child, stderr, exited } = start(['serve', '--port', '0', '--json'], db);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const found = /"url":"([^"]+)"/.exec(line)?.[1];
        if (found) resolve(found);
      });
      exited.then(() => reject(new Error(`engram serve exited before serving:\n${stderr()}`)));
    });
    for (const id of WRITES) {
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify(writeCall(id)),
      });
      expect(await answer.text()).toContain(`topics/t${id}`);
    }
    await caughtUp(db);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  expect(stderr()).not.toContain('search indexing');
});

it('engram stdio brings the search index up to date on its own, with no warning', async () => {
  const db = tempDir().file('memory.db');
  const { child, stderr, exited } = start(['stdio'], db);
  const answers = new Map<number, unknown>();
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const message = JSON.parse(pending.slice(0, end)) as { id?: number };
      if (message.id !== undefined) answers.set(message.id, message);
      pending = pending.slice(end + 1);
    }
  });
  const send = (message: object) => child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const answered = async (ids: readonly number[]) => {
    for (let waited = 0; !ids.every((id) => answers.has(id)); waited += 20) {
      if (waited > 20_000) throw new Error(`no answer to ${ids.join(', ')}; stderr: ${stderr()}`);
      await sleep(20);
    }
  };
  try {
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    });
    await answered([1]);
    send({ method: 'notifications/initialized' });
    for (const id of WRITES) send(writeCall(id));
    await answered(WRITES);
    await caughtUp(db);
  } finally {
    child.stdin?.end();
  }
  expect(await exited).toBe(0);
  expect(stderr()).not.toContain('search indexing');
});
