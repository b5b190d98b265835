/**
 * The built `engram stdio` indexes for search in its worker thread (search-worker.ts): the
 * worker runs from its source text, which the CLI's bundle must leave runnable. A worker
 * that cannot start hands the catch-up back to the event loop and warns, so writes and
 * searches still work and only the warning shows that the worker never ran: the bundled
 * worker called the bundle's own __require, undefined in the worker, and every start of
 * `engram stdio` and `engram serve` said "search indexing moved back to the main thread".
 */

import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { childEnv, ENGRAM_CLI, searchBacklogIn, tempDir } from '../helpers/engram.js';

it('engram stdio brings the search index up to date in its worker, with no warning', async () => {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const child = spawn(process.execPath, [ENGRAM_CLI, 'stdio', '--db', db], {
    env: childEnv(dir.path),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const answers = new Map<number, unknown>();
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const message = JSON.parse(pending.slice(0, end)) as { id?: number };
      if (message.id !== undefined) answers.set(message.id, message);
      pending = pending.slice(end + 1);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const answered = async (ids: readonly number[]) => {
    for (let waited = 0; !ids.every((id) => answers.has(id)); waited += 20) {
      if (waited > 20_000) throw new Error(`no answer to ${ids.join(', ')}; stderr: ${stderr}`);
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
    const writes = [10, 11, 12, 13, 14];
    for (const id of writes) {
      send({
        id,
        method: 'tools/call',
        params: { name: 'memory_write', arguments: { name: `topics/t${id}`, new: `zebra${id} tea`, description: 'd' } },
      });
    }
    await answered(writes);
    // Caught up on its own (no search asked for it), by the worker or by the loop it handed back to.
    for (let waited = 0; searchBacklogIn(db) !== 0; waited += 50) {
      if (waited > 20_000) throw new Error('the index never caught up');
      await sleep(50);
    }
    // A worker that fails hands back and warns when it exits: give it the time to.
    await sleep(300);
  } finally {
    child.stdin.end();
  }
  expect(await exited).toBe(0);
  expect(stderr).not.toContain('search indexing moved back to the main thread');
});
