/**
 * `engram activity`: what changed across one's whole memory, which assistant wrote it and
 * when, newest first (memory/activity.ts) — the timeline of the web UI's activity view, for
 * the terminal. A page at a time: the last line says how to see the next, with every
 * option that shaped this page (a database password left out, with a note saying so).
 */

import { type Command, InvalidArgumentError } from 'commander';
import { ACTIVITY_DEFAULT_LIMIT, ACTIVITY_LIMIT_CAP, type ActivityItem } from '../memory/activity.js';
import { shellWord } from '../memory/model/shell-word.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';
import { repeatCommand } from './repeat-command.js';

interface ActivityOptions extends CommonOptions {
  readonly actor?: string;
  readonly limit?: number;
  readonly before?: string;
}

function limit(value: string): number {
  const number = Number(value);
  if (!/^[0-9]+$/.test(value) || number < 1 || number > ACTIVITY_LIMIT_CAP) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${ACTIVITY_LIMIT_CAP}.`);
  }
  return number;
}

const time = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

function activityLine(item: ActivityItem): string {
  return `${time(item.at)}  ${item.operation.padEnd(8)}  ${item.name}@${item.revision}  ${item.actor}  (${item.size} bytes): ${item.description}`;
}

export function registerActivityCommand(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('activity'))
    .description('List the changes to your whole memory, newest first: when, operation, entry@revision, who, size')
    .option('--actor <name>', 'only the changes this assistant (client or token label) made')
    .option(
      '--limit <n>',
      `show at most n changes, 1 to ${ACTIVITY_LIMIT_CAP} (default ${ACTIVITY_DEFAULT_LIMIT})`,
      limit,
    )
    .option('--before <cursor>', 'the page after this cursor (the last line of a page gives it)')
    .action((options: ActivityOptions, command: Command) =>
      run(
        options,
        async (context, output) => {
          const { limit, before, actor } = options;
          const page = await context.memory.activity.list(cliCaller(context), { limit, before, actor });
          const lines = page.items.length === 0 ? ['No changes.'] : page.items.map(activityLine);
          if (page.next !== undefined) {
            // The same listing's next page: every option given but the cursor, then the new cursor.
            const next = repeatCommand(command, ['--before', '--json'], ['--before', shellWord(page.next)]);
            for (const note of next.notes) lines.push(`Note: ${note}.`);
            lines.push(`More: ${next.line}`);
          }
          output.result(lines.join('\n'), page);
        },
        'reads',
      ),
    );
}
