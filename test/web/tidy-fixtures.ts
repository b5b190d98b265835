/**
 * A memory as months of use leave it, for the tidying pages' tests and screenshots: entries
 * written 200 days ago, one opened by an assistant yesterday, one 100 days ago, two never,
 * one written last week, one near the entry cap; and Engram recording openings for 150
 * days (the database's record of when it began is set back, as that of a memory upgraded
 * then would be). Written through the services on a clock set back, on the server's own
 * database.
 */

import { createApp } from '../../src/app.js';
import type { Caller } from '../../src/memory/model/caller.js';
import { queryPostgres } from '../helpers/postgres.js';
import { backendOf, type Engram, storeOf } from './fixtures.js';

const DAY = 24 * 60 * 60 * 1000;
/** The entry cap the server is started with (its config's entryCap), so one entry is near it. */
export const ENTRY_CAP = 1_000;

export async function seedMonthsOfUse(engram: Engram, now: number): Promise<void> {
  let clock = now - 200 * DAY;
  const app = createApp({ store: await storeOf(engram), now: () => clock, policy: { entryCap: ENTRY_CAP } });
  try {
    const claude: Caller = { user: 'local', label: 'claude-code' };
    for (const [name, description, body] of [
      ['topics/tea', 'Teas the user likes', 'Sencha.'],
      ['topics/editor', 'The editor the user uses', 'Helix.'],
      ['topics/old-laptop', 'The ThinkPad X220', 'Arch, i3.'],
      ['topics/big', 'A long list', 'x'.repeat(900)],
    ] as const) {
      await app.memory.write(claude, { name, description, new: body });
    }
    clock = now - 100 * DAY;
    await app.memory.open(claude, ['topics/editor'], { byModel: true });
    clock = now - DAY;
    await app.memory.open(claude, ['topics/tea'], { byModel: true });
    clock = now - 7 * DAY;
    await app.memory.write(claude, { name: 'topics/new', description: 'Written last week', new: 'Fresh.' });
  } finally {
    // Closing writes the openings noted.
    await app.close();
  }
  const since = now - 150 * DAY;
  const backend = backendOf(engram);
  if (backend.kind === 'sqlite') {
    const Database = (await import('better-sqlite3')).default;
    const file = new Database(backend.path);
    file.prepare('UPDATE opened_since SET at = ?').run(since);
    file.close();
  } else {
    await queryPostgres(backend.url, 'UPDATE opened_since SET at = $1', [since]);
  }
}
