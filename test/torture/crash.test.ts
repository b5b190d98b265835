/**
 * Crash test: a child process appends acknowledged lines to one entry in a loop and is
 * SIGKILLed at random moments, again and again on the same database. After every kill
 * the database must hold every acknowledged line exactly once, nothing half-written, an
 * exact size, and pass SQLite's integrity check. On each SQLite driver this Node can load
 * (test/helpers/sqlite-drivers.ts; `npm run test:node-sqlite` runs node:sqlite's under Node 22 and 24).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../src/memory/memory.js';
import { utf8Bytes } from '../../src/memory/model/text.js';
import { type SqliteDriverName, sqliteDriver } from '../../src/storage/sqlite/drivers.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { driversUnderTest } from '../helpers/sqlite-drivers.js';
import { type Child, describeEnding, fixture, startChild } from './child.js';
import { type Random, tortureRandom } from './seed.js';

const KILLS = 24;
const ENTRY = 'topics/crash-log';
const CALLER = { user: 'local', label: 'verifier' };
const LINE = /^line (\d+)$/;

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'engram-crash-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** The numbers of the lines the child acknowledged, in the order it printed them. */
function acknowledged(child: Child): number[] {
  return child.lines.filter((line) => line !== 'ready').map(Number);
}

/**
 * Picks the moment: now and then while the child is still starting (opening the
 * database), usually after a random number of acknowledged writes plus a random delay,
 * so the kill lands anywhere in the write cycle.
 */
async function killAtRandomMoment(child: Child, random: Random): Promise<void> {
  if (random.next() < 0.2) {
    await sleep(random.int(0, 400));
  } else {
    const writes = random.int(0, 40);
    await child.until((lines) => lines.length > writes);
    await sleep(random.int(0, 15));
  }
  const ending = await child.kill();
  expect(ending.signal, `the child ended on its own: ${describeEnding(ending)}`).toBe('SIGKILL');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reopens the database after a kill and checks it; returns how many lines the entry holds. */
async function verify(
  driver: SqliteDriverName,
  path: string,
  acked: ReadonlySet<number>,
  linesBefore: number,
): Promise<number> {
  const raw = new (sqliteDriver(driver).Database)(path);
  try {
    expect(raw.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  } finally {
    raw.close();
  }

  const store = openSqliteStore({ path, driver });
  try {
    const memory = createMemory({ store });
    const [entry] = await store.get(CALLER.user, [ENTRY]);
    if (!entry) {
      expect(acked.size, 'acknowledged lines were lost with the whole entry').toBe(0);
      return 0;
    }
    const lines = entry.body.split('\n');
    expect(lines.pop(), 'the body ends with a newline').toBe('');
    for (const line of lines) expect(line, 'a half-written line').toMatch(LINE);
    const numbers = lines.map((line) => Number(LINE.exec(line)![1]));
    // Lines 0, 1, 2, … in order: each acknowledged one present exactly once, none duplicated.
    expect(numbers).toEqual(numbers.map((_, i) => i));
    for (const n of acked) expect(n, `acknowledged line ${n} is missing`).toBeLessThan(numbers.length);
    // Beyond the acknowledged lines, at most the one write in flight at the kill.
    const known = Math.max(linesBefore, ...[...acked].map((n) => n + 1));
    expect(numbers.length).toBeLessThanOrEqual(known + 1);

    expect(entry.size).toBe(utf8Bytes(entry.body));
    expect(await memory.index(CALLER)).toEqual([{ name: ENTRY, size: entry.size, description: entry.description }]);
    const latest = (await memory.recovery.history(CALLER, ENTRY)).at(-1);
    expect(latest).toMatchObject({ revision: entry.revision, body: entry.body });
    return numbers.length;
  } finally {
    await store.close();
  }
}

describe.each(driversUnderTest())('crash test on $name', ({ name: driver, missing }) => {
  const skipped = missing === undefined ? '' : ` (skipped: ${missing})`;
  it.skipIf(missing !== undefined)(
    `keeps every acknowledged line through ${KILLS} SIGKILLs at random moments${skipped}`,
    async () => {
      const random = tortureRandom();
      const path = join(folder, 'memory.db');
      const acked = new Set<number>();
      let lines = 0;

      for (let kill = 0; kill < KILLS; kill++) {
        const child = startChild(fixture('append-until-killed.mjs'), [path, ENTRY, String(lines), driver]);
        await killAtRandomMoment(child, random);
        const printed = acknowledged(child);
        expect(printed, 'the child acknowledges n, n+1, … from where the entry stood').toEqual(
          printed.map((_, i) => lines + i),
        );
        for (const n of printed) acked.add(n);
        lines = await verify(driver, path, acked, lines);
      }
      expect(acked.size, 'no write was ever acknowledged: the test proved nothing').toBeGreaterThan(0);
    },
    120_000,
  );
});
