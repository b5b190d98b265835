/**
 * The JSON server log tells of an unexpected failure by its type, message and stack only:
 * the properties a driver hangs on its errors (PostgreSQL's `detail` holds the refused
 * row, memory text included) and their causes never reach the log.
 */

import { describe, expect, it } from 'vitest';
import { createServerLog } from '../../src/cli/server-log.js';

describe('the JSON server log', () => {
  it('logs an internal error as type, message and stack, without its detail or cause', async () => {
    const lines: string[] = [];
    const serverLog = await createServerLog('json', (text) => lines.push(text));
    const failure = Object.assign(new Error('duplicate key value violates unique constraint "entries_live"'), {
      detail: 'Failing row contains (alice, notes/secret, hunter2).',
      where: 'SQL statement "INSERT INTO entries VALUES (hunter2)"',
      cause: new Error('body: hunter2'),
    });
    serverLog.internalError(failure);
    serverLog.log.close();
    const text = lines.join('');
    expect(text).not.toContain('hunter2');
    const line = JSON.parse(text.trim().split('\n').at(-1)!) as { error: Record<string, unknown>; msg: string };
    expect(line.msg).toBe('internal error');
    expect(line.error).toEqual({ type: 'Error', message: failure.message, stack: failure.stack });
  });
});
