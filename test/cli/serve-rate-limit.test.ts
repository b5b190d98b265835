/**
 * `engram serve`'s rate limits as a person sets them: the config file's "rateLimit", then
 * ENGRAM_RATE_LIMIT or --rate-limit over it (the flag over its variable), each in one
 * syntax; a setting that cannot be read stops the server before anything is opened, with a
 * message that says what was wrong and how to write it.
 */

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { postRpc, rpc } from '../http/fixtures.js';
import { serveInProcess } from './fixtures.js';

/** `engram serve --json --db FILE --port 0 ARGS` in this process, with `variables` and a config file. */
function serveWith(args: string[], variables: Record<string, string> = {}, config?: unknown) {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const configArgs = config === undefined ? [] : ['--config', dir.config(config)];
  const env = { ...childEnv(dir.path), ...variables };
  return { db, ...serveInProcess(main, ['--json', '--db', db, '--port', '0', ...configArgs, ...args], env) };
}

/** How many of three calls to /mcp are refused by a rate limit. */
async function refusedOfThree(served: ReturnType<typeof serveWith>): Promise<number> {
  const port = Number(new URL(await served.listening).port);
  let refused = 0;
  for (let i = 0; i < 3; i++) if ((await postRpc(port, rpc('tools/list'))).status === 429) refused++;
  served.stop('done');
  expect(await served.exited).toBe(0);
  return refused;
}

describe('engram serve --rate-limit', () => {
  it('takes the config file’s setting, the variable over it, and the flag over both', async () => {
    const config = { rateLimit: 'on,mcp=1/min' };
    expect(await refusedOfThree(serveWith([], {}, config))).toBe(2);
    expect(await refusedOfThree(serveWith([], { ENGRAM_RATE_LIMIT: 'mcp=2/min' }, config))).toBe(1);
    expect(await refusedOfThree(serveWith(['--rate-limit', 'off'], { ENGRAM_RATE_LIMIT: 'mcp=2/min' }, config))).toBe(
      0,
    );
  });

  it('holds no per-token limit on loopback without auth by default', async () => {
    expect(await refusedOfThree(serveWith([]))).toBe(0);
  });

  it('refuses a flag it cannot read, saying how to write it (exit 2)', async () => {
    const served = serveWith(['--rate-limit', 'mcp=600']);
    expect(await served.exited).toBe(2);
    expect(served.out.stderr).toContain(
      'mcp=600: a rate is a whole number per s, min or h (for example mcp=1200/min), or on, or off.',
    );
    expect(existsSync(served.db)).toBe(false);
  });

  it('refuses ENGRAM_RATE_LIMIT it cannot read, naming the variable (exit 2)', async () => {
    const served = serveWith([], { ENGRAM_RATE_LIMIT: 'tools=5/min' });
    expect(await served.exited).toBe(2);
    expect(served.out.stderr).toMatch(
      /^engram: ENGRAM_RATE_LIMIT=tools=5\/min: "tools=5\/min" names no limit: the limits are auth, sign-in, mcp, api; .* Or unset it\.\n/,
    );
    expect(existsSync(served.db)).toBe(false);
  });

  it('refuses a config file whose rateLimit it cannot read, naming the field', async () => {
    const served = serveWith([], {}, { rateLimit: 'api=5/day' });
    expect(await served.exited).not.toBe(0);
    expect(served.out.stderr).toContain('rateLimit: api=5/day: a rate is a whole number per s, min or h');
    expect(existsSync(served.db)).toBe(false);
  });
});
