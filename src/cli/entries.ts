/**
 * The memory operations for humans: index, open, write, drop. Same Memory service and
 * the same answers as the tools the model sees, but where the model is told how to call
 * (an empty index, a refusal) the person is told the command; --json gives scripts the
 * structured data.
 */

import type { Command } from 'commander';
import { EngramError } from '../memory/model/errors.js';
import { formatDropped, formatIndex, formatMissing, formatOpened, indexLine } from '../memory/model/format.js';
import type { Policy } from '../memory/model/policy.js';
import { formatCount } from '../memory/model/text.js';
import { readBoundedText } from './bounded-read.js';
import { type CommonOptions, type Context, cliCaller } from './context.js';
import type { Opening } from './existing-memory.js';
import { type Output, UsageError } from './output.js';

/** What `engram index` says of an empty memory: the command to start one (the model is told memory_write's arguments). */
const EMPTY_INDEX =
  'Memory is empty. Create the first entry with engram write, for example: ' +
  'engram write topics/preferences -d "What I prefer" --new "Green tea, no sugar."';

/** Opens the context, runs the command's body, reports and closes; `reads` never creates a database. */
export type Run = (
  options: CommonOptions,
  body: (context: Context, output: Output) => Promise<void>,
  opening?: Opening,
) => Promise<void>;

interface WriteOptions extends CommonOptions {
  readonly description?: string;
  readonly old?: string;
  readonly new?: string;
  readonly newFile?: string;
}

/**
 * Most bytes of new text read from a file or stdin: four times the entry cap (line ends
 * and lone surrogates may shrink as they are stored), and never less than 1 MiB.
 */
function newTextLimit(policy: Policy): number {
  return Math.max(4 * policy.entryCap, 1024 * 1024);
}

function readNewText(options: WriteOptions, dash: string | undefined, policy: Policy): string | undefined {
  if (dash !== undefined && dash !== '-')
    throw new UsageError(`unexpected argument "${dash}": only "-" (read new text from stdin) may follow the name`);
  const sources = [options.new !== undefined, options.newFile !== undefined, dash === '-'].filter(Boolean).length;
  if (sources > 1) throw new UsageError('give the new text once: --new TEXT, --new-file FILE, or - for stdin');
  const file = dash === '-' ? '-' : options.newFile;
  if (file === undefined) return options.new;
  // Read no further than any entry could hold once written: a larger text is refused unread.
  return readBoundedText(file, {
    bytes: newTextLimit(policy),
    what: 'a write reads',
    instead: `an entry holds at most ${formatCount(policy.entryCap)} bytes: write the part that belongs in it, or split it into several entries`,
    ...(file === '-' ? {} : { name: `--new-file ${file}` }),
  });
}

export function registerEntryCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('index'))
    .description('List every entry: name, size in bytes and description (what memory_open() shows)')
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const rows = await context.memory.index(cliCaller(context));
          output.result(rows.length === 0 ? EMPTY_INDEX : formatIndex(rows), rows);
        },
        'reads',
      ),
    );

  common(program.command('open'))
    .description('Show entries with their bodies (what memory_open(names) shows)')
    .argument('<names...>', 'entry names, <group>/<slug>')
    .action((names: string[], options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const { found, missing } = await context.memory.open(cliCaller(context), names);
          // Nothing found is a refusal, like memory_open's isError: message on stderr, exit 1.
          if (found.length === 0) {
            throw new EngramError(
              'NOT_FOUND',
              [...missing.map(formatMissing), 'engram index lists every entry.'].join('\n'),
            );
          }
          output.result(formatOpened(found, missing), { found, missing });
        },
        'reads',
      ),
    );

  common(program.command('write'))
    .description('Create, append to, edit or describe an entry (what memory_write does)')
    .argument('<name>', 'entry name, <group>/<slug>')
    .argument('[-]', 'read the new text from stdin')
    .option('-d, --description <text>', 'one line on what the entry covers (required to create)')
    .option('--old <text>', 'text to replace or remove; must occur exactly once')
    .option('--new <text>', 'replacement text, or the lines to append')
    .option('--new-file <file>', 'read the new text from a file ("-" for stdin)')
    .addHelpText(
      'after',
      `
Examples:
  engram write topics/editor -d "Editor preferences" --new "Uses Helix."   create
  engram write topics/editor --new "Tabs, width 4."                       append
  engram write topics/editor --old "Helix" --new "Neovim"                  replace
  engram write topics/editor --old "Tabs, width 4."                       remove
  git log -3 | engram write areas/engram -                                 append stdin`,
    )
    .action((name: string, dash: string | undefined, options: WriteOptions) =>
      run(options, async (context, output) => {
        const { entry, changed } = await context.memory.write(cliCaller(context), {
          name,
          description: options.description,
          old: options.old,
          new: readNewText(options, dash, context.settings.policy),
        });
        output.result(indexLine(entry), { entry, changed });
      }),
    );

  common(program.command('drop'))
    .description('Remove an entry (it goes to the trash)')
    .argument('<name>', 'entry name, <group>/<slug>')
    .action((name: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        const { entry: dropped } = await context.memory.drop(cliCaller(context), name);
        output.result(formatDropped(dropped), { dropped });
      }),
    );
}
