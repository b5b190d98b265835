/**
 * The import rules of docs/architecture.md, as `npm run lint` enforces them (biome.json's
 * noRestrictedImports, one override per folder): each case is a module at a path of src/
 * importing one specifier, linted in a scratch folder with the project's biome.json, and
 * must be refused or let through as the rules table says. So a glob that stops matching
 * (Biome matches the import as written, not as resolved) fails here, not in review.
 */

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');

/** [the importing module, what it imports, whether the rules allow it]. */
const CASES: ReadonlyArray<readonly [string, string, boolean]> = [
  ['src/memory/model/probe.ts', './usage.js', true],
  ['src/memory/model/probe.ts', '../port.js', true],
  ['src/memory/model/probe.ts', '../../json/json-nesting.js', true],
  ['src/memory/model/probe.ts', '../memory.js', false],
  ['src/memory/model/probe.ts', '../tools/call.js', false],
  ['src/memory/model/probe.ts', '../../storage/index.js', false],
  ['src/memory/model/probe.ts', '../../app.js', false],
  ['src/memory/probe.ts', './model/usage.js', true],
  ['src/memory/probe.ts', '../json/json-nesting.js', true],
  ['src/memory/probe.ts', '../storage/index.js', false],
  ['src/memory/probe.ts', '../http/app.js', false],
  ['src/memory/probe.ts', '../access/port.js', false],
  ['src/memory/probe.ts', '../transfer/transfer.js', false],
  ['src/memory/tools/probe.ts', '../../mcp/server.js', false],
  ['src/transfer/probe.ts', '../memory/memory.js', true],
  ['src/transfer/bridges/probe.ts', '../../memory/model/names.js', true],
  ['src/transfer/probe.ts', '../access/port.js', false],
  ['src/transfer/probe.ts', '../storage/index.js', false],
  ['src/transfer/probe.ts', '../cli/output.js', false],
  ['src/access/tokens/probe.ts', '../../memory/model/errors.js', true],
  ['src/access/tokens/probe.ts', '../../memory/port.js', true],
  ['src/access/tokens/probe.ts', '../../memory/memory.js', false],
  ['src/access/tokens/probe.ts', '../../storage/index.js', false],
  ['src/access/tokens/probe.ts', '../../http/limits.js', false],
  ['src/access/oauth/probe.ts', './http/router.js', false],
  ['src/access/oauth/http/probe.ts', '../../../http/limits.js', true],
  ['src/access/oauth/http/probe.ts', '../tokens.js', true],
  ['src/access/oauth/http/probe.ts', '../../../http/app.js', false],
  ['src/storage/sqlite/probe.ts', '../../memory/port.js', true],
  ['src/storage/sqlite/probe.ts', '../../access/port.js', true],
  ['src/storage/sqlite/probe.ts', '../../http/app.js', false],
  ['src/storage/sqlite/probe.ts', '../../app.js', false],
  ['src/http/probe.ts', '../app.js', true],
  ['src/http/probe.ts', '../memory/memory.js', true],
  ['src/http/probe.ts', '../storage/index.js', false],
  ['src/http/api/probe.ts', '../../storage/sqlite/index.js', false],
  ['src/cli/probe.ts', '../open-store.js', true],
  ['src/cli/probe.ts', '../storage/sqlite/index.js', false],
  ['src/mcp/probe.ts', '../storage/postgres/index.js', false],
  ['src/adapters/probe.ts', '../storage/memory/index.js', false],
  ['src/json/probe.ts', '../memory/model/text.js', false],
  ['src/app.ts', './storage/index.js', true],
  ['src/app.ts', './http/app.js', false],
  ['src/open-store.ts', './cli/output.js', false],
];

const folders: string[] = [];
/** The cases biome refused, by index. */
const refused = new Set<number>();

/** Where case `index` is written: its path, a probe given a name of its own. */
function fileOf(index: number): string {
  return CASES[index]![0].replace(/probe\.ts$/, `probe${index}.ts`);
}

/**
 * Lints the cases in rounds, one scratch folder with the project's biome.json each: a round
 * holds each file path once (src/app.ts is a case twice), so that one import is one file.
 */
beforeAll(() => {
  const rounds: number[][] = [];
  CASES.forEach((_case, index) => {
    const round = rounds.find((cases) => !cases.some((other) => fileOf(other) === fileOf(index)));
    if (round) round.push(index);
    else rounds.push([index]);
  });
  for (const round of rounds) {
    const folder = mkdtempSync(join(tmpdir(), 'engram-import-rules-'));
    folders.push(folder);
    copyFileSync(join(ROOT, 'biome.json'), join(folder, 'biome.json'));
    for (const index of round) {
      const file = join(folder, fileOf(index));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `import * as imported from '${CASES[index]![1]}';\nexport const probe = imported;\n`);
    }
    const lint = spawnSync(BIOME, ['lint', '--reporter=json', '--max-diagnostics=none', '.'], {
      cwd: folder,
      encoding: 'utf8',
    });
    const report = JSON.parse(lint.stdout) as {
      diagnostics: Array<{ category: string; location: { path: string } }>;
    };
    for (const diagnostic of report.diagnostics) {
      if (diagnostic.category !== 'lint/style/noRestrictedImports') continue;
      const index = round.find((candidate) => fileOf(candidate) === diagnostic.location.path);
      if (index === undefined) throw new Error(`a diagnostic of no case: ${diagnostic.location.path}`);
      refused.add(index);
    }
  }
});

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('the import rules (docs/architecture.md), as npm run lint checks them', () => {
  it.each(CASES.map((testCase, index) => [...testCase, index] as const))(
    '%s importing %s: allowed %s',
    (_path, _specifier, allowed, index) => {
      expect(refused.has(index)).toBe(!allowed);
    },
  );
});
