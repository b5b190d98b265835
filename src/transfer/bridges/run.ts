/**
 * An import from another memory system, the same through every door (`engram import
 * --from KIND`, `POST /api/import?from=KIND`): the kind's bridge reads the files into a
 * plan; a plan with items over the entry cap is refused, unless it is only a dry run that
 * shows them; the plan is applied by Transfer.import in one transaction, history naming
 * `import:KIND`; and what became of each item comes back as data, for each door to word.
 */

import type { Caller } from '../../memory/model/caller.js';
import { EngramError } from '../../memory/model/errors.js';
import { formatCount } from '../../memory/model/text.js';
import type { ImportMode, ImportReport, Transfer } from '../transfer.js';
import { BRIDGES, type BridgeKind, type BridgeOptions } from './index.js';
import { listedSources } from './listed-sources.js';
import { type ImportFile, type ImportPlan, type PlanProblem, planDocument, tooLarge } from './plan.js';
import { runWhole, runWithPauses } from './steps.js';

export interface ImportFromOptions extends BridgeOptions {
  readonly mode?: ImportMode;
  readonly overwrite?: boolean;
  readonly dryRun?: boolean;
  readonly allGroups?: boolean;
  /** Awaited every few milliseconds of reading and planning (a door's turn of the event loop); without it, the plan is made in one stretch. */
  readonly pause?: () => Promise<void>;
}

/** What the import does (or, in a dry run, would do) to one name of the plan. */
export type ItemAction = 'create' | 'append' | 'replace' | 'unchanged' | 'conflict' | 'skip';

/** One item of the source, and what became of it. */
export interface ImportedItem {
  readonly source: string;
  /** The names it becomes, with what happens to each; none when it is left out (`problem`). */
  readonly names: readonly { readonly name: string; readonly action: ItemAction }[];
  /** Why it is named, shortened, split or left out as it is. */
  readonly notes: readonly string[];
  readonly problem?: PlanProblem;
}

export interface ImportFromResult {
  readonly kind: BridgeKind;
  readonly plan: ImportPlan;
  readonly report: ImportReport;
  /** What became of each item: those that became entries, and the first items left out (plan.ts LISTED_LEFT_OUT). */
  readonly items: readonly ImportedItem[];
  /** How many more items were left out, by problem, not listed in `items`. */
  readonly unlisted: ImportPlan['unlisted'];
  /** The sources over the entry cap (those listed): a dry run shows them; without `split`, the import itself is refused. */
  readonly tooLarge: readonly string[];
}

/** What became of one name of the plan, from the import's report. */
function actionOf(name: string, report: ImportReport): ItemAction {
  if (report.created.includes(name)) return 'create';
  if (report.appended?.includes(name)) return 'append';
  if (report.updated.includes(name)) return 'replace';
  if (report.unchanged.includes(name)) return 'unchanged';
  if (report.conflicts.includes(name)) return 'conflict';
  // Left out by the import: its group is not one the model can write.
  return 'skip';
}

export async function importFromSource(
  transfer: Transfer,
  caller: Caller,
  kind: BridgeKind,
  files: readonly ImportFile[],
  options: ImportFromOptions = {},
): Promise<ImportFromResult> {
  const bridge = BRIDGES[kind];
  const { pause } = options;
  const plan = !pause
    ? runWhole(bridge.steps(files, transfer.policy, options))
    : bridge.read
      ? await bridge.read(files, transfer.policy, options, pause)
      : await runWithPauses(bridge.steps(files, transfer.policy, options), pause);
  const unfit = tooLarge(plan);
  const sources = unfit.listed.map((item) => item.source);
  if (unfit.count > 0 && !options.dryRun) {
    const cap = transfer.policy.entryCap;
    throw new EngramError(
      'TOO_LARGE',
      `${formatCount(unfit.count)} item(s) are over the entry cap of ${formatCount(cap)} bytes: ${listedSources({ sources, count: unfit.count })}. ` +
        'Split them into -2, -3 entries, or shorten them in the source; nothing was imported.',
      { reason: 'import-too-large', sources, count: unfit.count, cap },
    );
  }
  const report = await transfer.import({ ...caller, label: `import:${kind}` }, planDocument(plan), {
    mode: options.mode ?? 'merge',
    overwrite: options.overwrite === true,
    dryRun: options.dryRun === true,
    allGroups: options.allGroups === true,
    append: bridge.existing === 'append',
  });
  const items = plan.items.map(
    (item): ImportedItem => ({
      source: item.source,
      names: item.problem ? [] : item.names.map((name) => ({ name, action: actionOf(name, report) })),
      notes: item.notes,
      ...(item.problem ? { problem: item.problem } : {}),
    }),
  );
  return { kind, plan, report, items, unlisted: plan.unlisted, tooLarge: sources };
}
