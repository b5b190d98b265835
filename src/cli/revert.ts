/**
 * `engram revert`: undo what one assistant did (memory/revert.ts). `--actor NAME --since
 * TIME [--until TIME]` reverts that actor's changes in the range — each entry back to its
 * state before the actor's first change there; `--dry-run` shows the preview and changes
 * nothing; entries another actor changed since are conflicts, skipped unless named with
 * `--include-conflicts` (or all of them with `--all-conflicts`). `--undo ID` undoes a
 * revert, or a merge (engram merge), the same way. The preview's lines say what each entry returns to.
 */

import { type Command, InvalidArgumentError } from 'commander';
import type { ChangeSummary } from '../memory/model/revert-plan.js';
import { countOf } from '../memory/model/text.js';
import type { EntryPreview, RevertChoice, RevertPreview, RevertResult } from '../memory/revert.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';
import { UsageError } from './output.js';
import { parseTimeArg } from './time-arg.js';

interface RevertOptions extends CommonOptions {
  readonly actor?: string;
  readonly since?: number;
  readonly until?: number;
  readonly undo?: string;
  readonly dryRun?: boolean;
  readonly includeConflicts?: string[];
  readonly allConflicts?: boolean;
}

const time = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

const ACTION_WORDS: Record<EntryPreview['action'], string> = {
  drop: 'drop',
  undrop: 'undrop',
  restore: 'restore',
  none: 'as was',
  unavailable: 'unknown',
};

function changeWords(change: ChangeSummary): string {
  return `${change.operation} by ${change.actor} at ${time(change.at)}`;
}

/** One entry of the preview: what reverting does, then the changes reverted and, for a conflict, the later ones. */
function entryLines(entry: EntryPreview): string[] {
  const lines = [`${ACTION_WORDS[entry.action].padEnd(8)}  ${entry.name}${entry.conflict ? '  (conflict)' : ''}`];
  lines.push(`          reverts: ${entry.changes.map(changeWords).join('; ')}`);
  if (entry.conflict) lines.push(`          changed since: ${entry.conflicts.map(changeWords).join('; ')}`);
  if (entry.action === 'unavailable') {
    lines.push('          its state before is no longer kept in history: left as it is');
  } else if (entry.target && !entry.target.present) {
    lines.push('          returns to: not there (dropped to the trash)');
  } else if (entry.target?.present) {
    lines.push(`          returns to: ${entry.target.description}`);
  }
  return lines;
}

function previewText(preview: RevertPreview, options: RevertOptions): string {
  const what =
    preview.undoes !== undefined
      ? `Undo of revert ${preview.undoes}`
      : `Revert of ${preview.actor}'s changes since ${time(preview.since ?? 0)}${
          preview.until === undefined ? '' : ` until ${time(preview.until)}`
        }`;
  const conflicts = preview.entries.filter((entry) => entry.conflict);
  const lines = [`${what}: ${countOf(preview.entries.length, 'entry', 'entries')}.`];
  for (const entry of preview.entries) lines.push(...entryLines(entry));
  if (conflicts.length > 0 && !options.allConflicts) {
    lines.push(
      `Conflicts are skipped unless chosen: --include-conflicts ${conflicts.map((entry) => entry.name).join(' ')}, ` +
        'or --all-conflicts.',
    );
  }
  lines.push('Dry run: nothing was changed.');
  return lines.join('\n');
}

function resultText(result: RevertResult): string {
  const lines = [
    `Reverted ${countOf(result.reverted.length, 'entry', 'entries')} as revert ${result.id}:`,
    ...result.reverted.map((item) => `  ${item.action.padEnd(8)}${item.name}`),
  ];
  for (const item of result.skipped) {
    lines.push(
      `  skipped ${item.name} (${item.why === 'conflict' ? 'changed by another since: a conflict' : 'its earlier state is no longer kept'})`,
    );
  }
  lines.push(`Undo it with: engram revert --undo ${result.id}`);
  return lines.join('\n');
}

function choiceOf(options: RevertOptions): RevertChoice {
  if (options.allConflicts && options.includeConflicts) {
    throw new UsageError('give --include-conflicts NAME… or --all-conflicts, not both.');
  }
  return { include: options.allConflicts ? 'all' : options.includeConflicts };
}

function timeArg(value: string): number {
  return parseTimeArg(value);
}

function revertId(value: string): string {
  if (!/^[0-9a-z]{1,12}-[0-9a-f]{8}$/.test(value)) {
    throw new InvalidArgumentError(
      'expected a revert or merge id as engram revert or engram merge printed it (like mjx2k9a0-3f9c1b2e).',
    );
  }
  return value;
}

export function registerRevertCommand(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('revert'))
    .description("Undo one assistant's changes over a time range (or undo a revert), after a preview with --dry-run")
    .option('--actor <name>', 'whose changes: the client or token label engram activity shows')
    .option(
      '--since <time>',
      'from this time: 2026-12-01, 2026-12-01T09:30 (UTC), or back from now: 90m, 2h, 3d',
      timeArg,
    )
    .option('--until <time>', 'up to this time (default: now), written as --since', timeArg)
    .option('--undo <id>', 'undo the revert or merge with this id (engram revert or engram merge printed it)', revertId)
    .option('--dry-run', 'show what would be reverted, change nothing')
    .option('--include-conflicts <names...>', 'revert these conflicting entries anyway (changed by another since)')
    .option('--all-conflicts', 'revert every conflicting entry anyway')
    .addHelpText(
      'after',
      '\nEach entry returns to its state just before the actor first changed it in the range: entries it created\n' +
        'go to the trash, entries it dropped come back. An entry another actor changed after it is a conflict, left\n' +
        'as it is unless you choose it. The revert is one change, undone with engram revert --undo ID.\n\n' +
        'Examples:\n' +
        '  engram revert --actor claude-desktop --since 2h --dry-run\n' +
        '  engram revert --actor "laptop token" --since 2026-12-01 --until 2026-12-02T12:00\n' +
        '  engram revert --undo mjx2k9a0-3f9c1b2e',
    )
    .action((options: RevertOptions) =>
      run(
        options,
        async (context, output) => {
          const caller = cliCaller(context);
          const revert = context.memory.revert;
          const choice = choiceOf(options);
          if (options.undo !== undefined) {
            if (options.actor !== undefined || options.since !== undefined || options.until !== undefined) {
              throw new UsageError('--undo ID takes no --actor, --since or --until: the revert names them.');
            }
            if (options.dryRun) {
              const preview = await revert.previewUndo(caller, options.undo);
              return output.result(previewText(preview, options), preview);
            }
            const result = await revert.undo(caller, options.undo, choice);
            return output.result(resultText(result), result);
          }
          if (options.actor === undefined || options.since === undefined) {
            throw new UsageError(
              'give --actor NAME and --since TIME (or --undo ID); engram activity shows the actors.',
            );
          }
          const range = { actor: options.actor, since: options.since, until: options.until };
          if (options.dryRun) {
            const preview = await revert.preview(caller, range);
            return output.result(previewText(preview, options), preview);
          }
          const result = await revert.apply(caller, range, choice);
          output.result(resultText(result), result);
        },
        'reads',
      ),
    );
}
