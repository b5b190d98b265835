/**
 * `engram import --from KIND PATH`: brings in a memory kept by another system (transfer/bridges)
 * through the same import as an export document — one transaction, the tools' names and
 * caps, history recorded as `import:KIND` — and says, item by item, what was (or, with
 * --dry-run, would be) created, appended, left as it was or left out, and why.
 */

import { formatCount } from '../memory/model/text.js';
import { BRIDGES, type BridgeKind } from '../transfer/bridges/index.js';
import { type ImportedItem, type ImportFromResult, importFromSource } from '../transfer/bridges/run.js';
import type { ImportMode } from '../transfer/transfer.js';
import { type Context, cliCaller } from './context.js';
import type { Output } from './output.js';
import { UsageError } from './output.js';
import { readSource } from './source-files.js';

export interface ImportFromOptions {
  readonly mode: ImportMode;
  readonly overwrite?: boolean;
  readonly dryRun?: boolean;
  readonly allGroups?: boolean;
  readonly split?: boolean;
  /** `--map TYPE=GROUP`, as given. */
  readonly map?: readonly string[];
  readonly name?: string;
}

/** `--map person=people` flags as a table; a flag without `=` is a usage error. */
function mapTable(flags: readonly string[] = []): Record<string, string> {
  const table: Record<string, string> = {};
  for (const flag of flags) {
    const equals = flag.indexOf('=');
    if (equals <= 0 || equals === flag.length - 1) {
      throw new UsageError(`--map ${flag}: expected TYPE=GROUP, for example --map person=people`);
    }
    table[flag.slice(0, equals).trim()] = flag.slice(equals + 1).trim();
  }
  return table;
}

const PROBLEM_ACTION = { duplicate: 'duplicate', 'too-large': 'too large', 'not-an-entry': 'not an entry' } as const;

function whyOf(action: string): string | undefined {
  if (action === 'unchanged') return 'memory holds this already';
  if (action === 'conflict') return 'an entry of this name differs: left as it is (--overwrite replaces it)';
  if (action === 'skip') return 'its group is not one the model can write (--all-groups imports it)';
  return undefined;
}

/** The notes of an item, with how to act on what became of it. */
function notesOf(item: ImportedItem): string[] {
  const remedy = item.problem === 'too-large' ? ['split it with --split, or shorten it in the source'] : [];
  return [...new Set([...item.notes, ...remedy, ...item.names.flatMap(({ action }) => whyOf(action) ?? [])])];
}

const PROBLEM_PLURAL = { duplicate: 'duplicates', 'too-large': 'too large', 'not-an-entry': 'not entries' } as const;

/** The report, item by item, as data and as lines for people; items left out past the first ones only counted. */
function describe({ kind, report, items: imported, unlisted }: ImportFromResult, purged: boolean) {
  const items = imported.map((item) => ({ ...item, notes: notesOf(item) }));
  const lines: string[] = [];
  if (report.dryRun) lines.push('Dry run: nothing was changed.');
  for (const item of items) {
    const head = item.problem
      ? `${PROBLEM_ACTION[item.problem]}: ${item.source}`
      : `${item.names.map(({ action, name }) => `${action} ${name}`).join(', ')}  (from ${item.source})`;
    lines.push(head, ...item.notes.map((note) => `    ${note}`));
  }
  const more = Object.entries(unlisted).filter(([, n]) => n > 0) as [keyof typeof PROBLEM_PLURAL, number][];
  for (const [problem, n] of more) lines.push(`and ${formatCount(n)} more ${PROBLEM_PLURAL[problem]}, not listed`);
  if (report.dropped.length > 0) {
    lines.push(`${purged ? 'dropped and purged for good' : 'dropped to the trash'}: ${report.dropped.join(', ')}`);
  }
  const count = (action: string) => items.flatMap((item) => item.names).filter((name) => name.action === action).length;
  const summary = ['create', 'append', 'replace', 'unchanged', 'conflict', 'skip']
    .map((action) => [action, count(action)] as const)
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${action}`);
  const leftOut = items.filter((item) => item.problem).length + more.reduce((sum, [, n]) => sum + n, 0);
  if (leftOut > 0) summary.push(`${formatCount(leftOut)} left out`);
  lines.push(`${report.dryRun ? 'Would import' : 'Imported'} from ${kind}: ${summary.join(', ') || 'nothing'}.`);
  return { text: lines.join('\n'), items, ...(more.length > 0 ? { unlisted } : {}) };
}

export async function importFrom(
  context: Context,
  output: Output,
  kind: BridgeKind,
  path: string,
  options: ImportFromOptions,
): Promise<void> {
  const bridge = BRIDGES[kind];
  const files = readSource(path, bridge.folder, bridge.indexFile);
  const result = await importFromSource(context.transfer, cliCaller(context), kind, files, {
    mode: options.mode,
    overwrite: options.overwrite === true,
    dryRun: options.dryRun === true,
    allGroups: options.allGroups === true,
    split: options.split === true,
    map: mapTable(options.map),
    ...(options.name !== undefined ? { name: options.name } : {}),
  });
  const { text, items, ...unlisted } = describe(result, context.settings.policy.trashRetentionDays === 0);
  const unfit = result.tooLarge.length + result.unlisted['too-large'];
  const refusal =
    unfit > 0 ? `\nWithout --split, this import would be refused: ${formatCount(unfit)} item(s) are too large.` : '';
  output.result(`${text}${refusal}`, { kind, dryRun: result.report.dryRun, items, ...unlisted, report: result.report });
}
