/**
 * Concurrency torture: 4 processes × 100 mixed operations (append, replace, describe,
 * drop and recreate) on 3 entries of one store at once, on SQLite and on PostgreSQL.
 * What must hold afterwards is listed on runTorture.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, onTestFinished } from 'vitest';
import { createTestDatabase, findTestPostgres } from '../helpers/postgres.js';
import { runTorture, type TortureOptions } from './mixed-operations.js';
import { tortureRandom } from './seed.js';

const OPTIONS: TortureOptions = { workers: 4, operationsPerWorker: 100, entries: 3 };
const TIMEOUT_MS = 120_000;
const server = await findTestPostgres();

describe('concurrency torture', () => {
  it(
    'on one SQLite file',
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'engram-torture-'));
      onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
      await runTorture({ backend: 'sqlite', target: join(folder, 'memory.db') }, tortureRandom(), OPTIONS);
    },
    TIMEOUT_MS,
  );

  it.skipIf(server === undefined)(
    'on one PostgreSQL database',
    async () => {
      const database = await createTestDatabase(server!);
      onTestFinished(() => database.drop());
      await runTorture({ backend: 'postgres', target: database.url }, tortureRandom(), OPTIONS);
    },
    TIMEOUT_MS,
  );
});
