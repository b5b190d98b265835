/**
 * A client may write its last calls and close stdin at once (a script piping requests
 * in): calls already received must still reach the database before engram stdio exits.
 */

import { describe, expect, it } from 'vitest';
import { childEnv, queryDatabase, runEngram, tempDir } from '../helpers/engram.js';

const lines = (...messages: unknown[]) => `${messages.map((message) => JSON.stringify(message)).join('\n')}\n`;

describe('engram stdio when stdin closes', () => {
  it('finishes the calls it received before closing the database', async () => {
    const dir = tempDir();
    const db = dir.file('memory.db');
    const input = lines(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'piped-script', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'memory_write', arguments: { name: 'topics/piped', description: 'Piped', new: 'arrived' } },
      },
    );
    const run = await runEngram(['stdio', '--db', db], childEnv(dir.path), input);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(/not open|internal error/);
    expect(
      queryDatabase<{ body: string; actor: string }>(
        db,
        "SELECT r.body, r.actor FROM entries e JOIN revisions r ON r.entry_id = e.id WHERE e.name = 'topics/piped'",
      ),
    ).toEqual([{ body: 'arrived\n', actor: 'piped-script' }]);
  });
});
