/**
 * Many users at once, for the HTTP benchmark: one bearer token per connection, each of a
 * user of its own, whose writes never wait on another's lock — the workload of a team
 * server, which DESIGN §7 judges against the serial commit rate. The users, their tokens
 * and their entries are made in-process through the store, before `engram serve --auth
 * token` opens the same database.
 */

import { openApp } from '../src/app.js';
import { appendedLine, bodyOf, subject } from './content.js';

/**
 * Entries each user holds, and appends to in turn. User 0 takes every write of the rows
 * at one connection: with 50 entries, faster writes grew some past the entry cap (16 KiB)
 * within one run and their appends were refused; at 100 each grows by ~7 KB at most.
 */
export const USER_ENTRIES = 100;

/** The name a user's request `serial` appends to. */
export function userEntry(serial: number): string {
  return subject(serial % USER_ENTRIES).name;
}

/** The arguments of a user's write `serial`: an append of a distinct line. */
export function userWrite(serial: number): Record<string, unknown> {
  return { name: userEntry(serial), new: appendedLine(serial) };
}

/** The name of user `at` (from 0), in Engram's database and the MCP floor's. */
export function benchUser(at: number): string {
  return `bench-user-${String(at).padStart(3, '0')}`;
}

/** The bearer token of user `at` on the MCP floor (floor-server.ts), which keeps its tokens in memory. */
export function floorToken(at: number): string {
  return `floor-token-${at}`;
}

/**
 * Makes `users` users in the database (SQLite file `db`, or PostgreSQL at `databaseUrl`),
 * each with USER_ENTRIES entries and one token, and returns the tokens, one per user.
 */
export async function seedUsers(target: { db: string; databaseUrl?: string | undefined }, users: number) {
  const { memory, access, close } = await openApp({
    backend: target.databaseUrl ? { kind: 'postgres', url: target.databaseUrl } : { kind: 'sqlite', path: target.db },
  });
  try {
    return await Promise.all(
      Array.from({ length: users }, async (_, at) => {
        const user = benchUser(at);
        const caller = { user, label: 'bench seed' };
        for (let index = 0; index < USER_ENTRIES; index++) {
          const { name, description } = subject(index);
          await memory.write(caller, { name, description, new: bodyOf(subject(index)) });
        }
        return (await access.create({ user, label: `bench ${user}` })).token;
      }),
    );
  } finally {
    await close();
  }
}
