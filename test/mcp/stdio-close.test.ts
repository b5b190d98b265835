/**
 * A client may write its last calls and close stdin at once (a script piping requests
 * in): calls already received must still reach the database before engram stdio exits,
 * their answers still reach stdout, and the openings they noted (memory/opened.ts) be
 * written as the app closes.
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
    expect(run.stderr).not.toMatch(/not open|internal error|unanswered/);
    const answers = run.stdout
      .trim()
      .split('\n')
      .map((answer) => JSON.parse(answer) as { id: number; result?: { isError?: boolean } });
    expect(answers.map((answer) => answer.id)).toEqual([1, 2]);
    expect(answers[1]?.result).toBeDefined();
    expect(answers[1]?.result?.isError).not.toBe(true);
    expect(
      queryDatabase<{ body: string; actor: string }>(
        db,
        "SELECT r.body, r.actor FROM entries e JOIN revisions r ON r.entry_id = e.id WHERE e.name = 'topics/piped'",
      ),
    ).toEqual([{ body: 'arrived\n', actor: 'piped-script' }]);
  });

  it('writes when the entries it served were opened, by a tool call or a resource read, before it exits', async () => {
    const dir = tempDir();
    const db = dir.file('memory.db');
    const start = (id: number) => [
      {
        jsonrpc: '2.0',
        id,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'piped-script', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ];
    const call = (id: number, name: string, args: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const written = lines(
      ...start(1),
      call(2, 'memory_write', { name: 'topics/tool', description: 'By tool', new: 'a' }),
      call(3, 'memory_write', { name: 'topics/resource', description: 'By resource', new: 'b' }),
      call(4, 'memory_write', { name: 'topics/unopened', description: 'Never opened', new: 'c' }),
    );
    expect((await runEngram(['stdio', '--db', db], childEnv(dir.path), written)).code).toBe(0);
    const before = Date.now();

    const opening = lines(...start(1), call(2, 'memory_open', { names: ['topics/tool'] }), {
      jsonrpc: '2.0',
      id: 3,
      method: 'resources/read',
      params: { uri: 'memory://entry/topics%2Fresource' },
    });
    const run = await runEngram(['stdio', '--db', db], childEnv(dir.path), opening);

    expect(run.code).toBe(0);
    const rows = queryDatabase<{ name: string; opened: number | null }>(
      db,
      'SELECT name, opened FROM entries ORDER BY name',
    );
    expect(rows.map((row) => row.name)).toEqual(['topics/resource', 'topics/tool', 'topics/unopened']);
    for (const row of rows.slice(0, 2)) expect(row.opened).toBeGreaterThanOrEqual(before);
    expect(rows[2]?.opened).toBeNull();
  });
});
