/**
 * The published declarations need no type package of the database drivers: better-sqlite3
 * and pg are dependencies, but @types/better-sqlite3 and @types/pg only devDependencies, so
 * a dependent that checks library types (skipLibCheck off) would not have them. The stores
 * are typed by their own slice of each driver instead (src/storage/{sqlite,postgres}/driver.ts).
 * Read from the build, as a dependent gets it.
 */

import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'dist');
const DRIVERS = ['better-sqlite3', 'pg'];

/** The modules a declaration file names: `from 'x'`, `import('x')`, `/// <reference types="x" />`. */
function modulesNamedBy(declarations: string): string[] {
  const named = /\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|<reference\s+types=['"]([^'"]+)['"]/g;
  return [...declarations.matchAll(named)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

/** A dependent's program using the stores of the main entry. */
const CONSUMER = `
import { createMemory, openPostgresStore, openSqliteStore, type PostgresStore, type SqliteStore } from 'engram';
export const sqlite: SqliteStore = openSqliteStore({ path: ':memory:' });
export const postgres: Promise<PostgresStore> = openPostgresStore({ connectionString: 'postgres://localhost/engram' });
export const memory = createMemory({ store: sqlite });
`;

/**
 * The dependent's settings: library types checked, Node's types present, `engram` read from
 * the build, and the drivers' modules resolved to a file that exports nothing, as if their
 * type packages were not installed (this checkout has them).
 */
function consumerConfig(folder: string): object {
  const nothing = join(folder, 'nothing.d.ts');
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      paths: { engram: [join(DIST, 'index.d.ts')], 'better-sqlite3': [nothing], pg: [nothing] },
    },
    files: [join(folder, 'consumer.ts')],
  };
}

describe('the published declarations', () => {
  it('import nothing from the database drivers', async () => {
    const files = (await readdir(DIST, { recursive: true })).filter((file) => file.endsWith('.d.ts'));
    const named = new Map<string, string[]>();
    for (const file of files) named.set(file, modulesNamedBy(await readFile(join(DIST, file), 'utf8')));

    // The reading finds what the declarations do import, so it would find a driver too.
    expect(named.get('index.d.ts')).toContain('./storage/sqlite/index.js');
    const drivers = [...named].flatMap(([file, modules]) =>
      modules.filter((module) => DRIVERS.includes(module)).map((module) => `${file}: ${module}`),
    );
    expect(drivers).toEqual([]);
  });

  it('type-check in a dependent without the type packages of the drivers', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'engram-consumer-'));
    try {
      await writeFile(join(folder, 'consumer.ts'), CONSUMER);
      await writeFile(join(folder, 'nothing.d.ts'), 'export {};\n');
      await writeFile(join(folder, 'tsconfig.json'), JSON.stringify(consumerConfig(folder)));
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const errors = await promisify(execFile)(process.execPath, [tsc, '-p', join(folder, 'tsconfig.json')]).then(
        () => '',
        (error: { stdout?: string }) => error.stdout || String(error),
      );
      expect(errors).toBe('');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
