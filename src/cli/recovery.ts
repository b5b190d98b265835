/**
 * Seeing and undoing changes, for the human: history, show, diff, restore, trash,
 * undrop, purge. The model never sees these; they are how a person fixes its mistakes.
 */

import { type Command, InvalidArgumentError } from 'commander';
import { indexLine } from '../memory/model/format.js';
import { lineCount } from '../memory/model/revision-diff.js';
import { countOf, formatCount, utf8Bytes } from '../memory/model/text.js';
import type { RevisionRecord } from '../memory/port.js';
import type { RevisionDiff } from '../memory/recovery.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';

interface RevOptions extends CommonOptions {
  readonly rev: number;
  readonly to?: number;
}

function revisionNumber(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new InvalidArgumentError('a revision is a whole number from 1 up.');
  return number;
}

const time = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

function historyLine(item: RevisionRecord): string {
  const line = `${String(item.revision).padStart(4)}  ${time(item.at)}  ${item.operation.padEnd(8)}  ${item.actor}  (${utf8Bytes(item.body)} bytes): ${item.description}`;
  // A revert's revisions say which revert made them, for engram revert --undo.
  return item.note === undefined ? line : `${line}\n      ${item.note}`;
}

/** A revision of a diff too different to show line by line, for --json: its size and line count. */
function diffSide(item: RevisionRecord) {
  return {
    revision: item.revision,
    description: item.description,
    size: utf8Bytes(item.body),
    lines: lineCount(item.body),
  };
}

/** Says that two revisions are too different to diff, with their sizes, and how to see each. */
function tooDifferentText(diff: RevisionDiff): string {
  const { name, from, to } = diff;
  const size = (item: RevisionRecord) =>
    `revision ${item.revision} has ${countOf(lineCount(item.body), 'line')} (${formatCount(utf8Bytes(item.body))} bytes)`;
  return [
    `Revisions ${from.revision} and ${to.revision} of ${name} are too different to show line by line: ` +
      `${size(from)}, ${size(to)}.`,
    'See each in full to compare them:',
    `  engram show ${name} --rev ${from.revision}`,
    `  engram show ${name} --rev ${to.revision}`,
  ].join('\n');
}

export function registerRecoveryCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('history'))
    .description('List the revisions of an entry: number, time, operation, who, size, description')
    .argument('<name>', 'entry name (live, or in the trash)')
    .action((name: string, options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const revisions = await context.memory.recovery.history(cliCaller(context), name);
          output.result(revisions.map(historyLine).join('\n'), revisions);
        },
        'reads',
      ),
    );

  common(program.command('show'))
    .description('Show one revision of an entry, description and body')
    .argument('<name>', 'entry name')
    .requiredOption('--rev <n>', 'revision number (see engram history)', revisionNumber)
    .action((name: string, options: RevOptions) =>
      run(
        options,
        async (context, output) => {
          const item = await context.memory.recovery.revision(cliCaller(context), name, options.rev);
          const header = `${name}@${item.revision} (${utf8Bytes(item.body)} bytes): ${item.description}`;
          output.result(`${header}\n${item.body}`, item);
        },
        'reads',
      ),
    );

  common(program.command('diff'))
    .description('Unified diff of an entry body between two revisions (to the current one by default)')
    .argument('<name>', 'entry name')
    .requiredOption('--rev <n>', 'revision to compare from', revisionNumber)
    .option('--to <m>', 'revision to compare to (default: the latest)', revisionNumber)
    .action((name: string, options: RevOptions) =>
      run(
        options,
        async (context, output) => {
          const diff = await context.memory.recovery.diff(cliCaller(context), name, options.rev, options.to);
          if (diff.patch !== null) output.result(diff.patch, { diff: diff.patch, tooDifferent: false });
          else {
            output.result(tooDifferentText(diff), {
              diff: null,
              tooDifferent: true,
              from: diffSide(diff.from),
              to: diffSide(diff.to),
            });
          }
        },
        'reads',
      ),
    );

  common(program.command('restore'))
    .description("Bring back a revision's description and body, as a new revision")
    .argument('<name>', 'entry name')
    .requiredOption('--rev <n>', 'revision to bring back', revisionNumber)
    .action((name: string, options: RevOptions) =>
      run(options, async (context, output) => {
        const entry = await context.memory.recovery.restore(cliCaller(context), name, options.rev);
        output.result(`Restored ${indexLine(entry)}`, { entry });
      }),
    );

  common(program.command('trash'))
    .description('List dropped entries: name, dropped when and by whom, purge date')
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const items = await context.memory.recovery.trash(cliCaller(context));
          const lines = items.map(
            (item) =>
              `${indexLine(item)}\n  dropped ${time(item.droppedAt)} by ${item.droppedBy}; purged after ${time(item.purgeAt)}`,
          );
          output.result(lines.length > 0 ? lines.join('\n') : 'The trash is empty.', items);
        },
        'reads',
      ),
    );

  common(program.command('undrop'))
    .description('Bring a dropped entry back from the trash')
    .argument('<name>', 'entry name')
    .action((name: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        const entry = await context.memory.recovery.undrop(cliCaller(context), name);
        output.result(`Undropped ${indexLine(entry)}`, { entry });
      }),
    );

  common(program.command('purge'))
    .description('Forget an entry for good: it and all its revisions, with no copy left in the database files')
    .argument('<name>', 'entry name (in the trash; a live one needs --force)')
    .option('--force', 'purge a live entry too')
    .action((name: string, options: CommonOptions & { force?: boolean }) =>
      run(options, async (context, output) => {
        const count = await context.memory.recovery.purge(cliCaller(context), name, { force: options.force === true });
        output.result(`Purged ${name} (${count} ${count === 1 ? 'copy' : 'copies'}) and all its history.`, {
          purged: name,
          copies: count,
        });
      }),
    );
}
