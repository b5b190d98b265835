/** Export, import and wipe: the user's whole memory as one JSON document, in their hands. */

import { closeSync, existsSync, fchmodSync, fstatSync, openSync, statSync, writeSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { BRIDGE_KINDS, BRIDGES, type BridgeKind } from '../transfer/bridges/index.js';
import { markdownExport } from '../transfer/bridges/markdown.js';
import type { ImportReport } from '../transfer/transfer.js';
import { readBounded } from './bounded-read.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';
import { type ImportFromOptions, importFrom } from './import-from.js';
import { writeMarkdownExport } from './markdown-export.js';
import { UsageError } from './output.js';
import { MAX_SOURCE_BYTES } from './source-files.js';

/** The kinds besides markdown that read a folder, for a folder named without --from. */
const OTHER_FOLDER_KINDS = BRIDGE_KINDS.filter((kind) => BRIDGES[kind].folder && kind !== 'markdown');

/**
 * The export document FILE ("-" is stdin), within the most one import reads. A folder is
 * no document: it is a memory kept as files, which --from reads (its kinds listed).
 */
function readDocument(file: string): string {
  if (file !== '-' && existsSync(file) && statSync(file).isDirectory()) {
    throw new UsageError(
      `${file} is a folder, and engram import without --from reads one export document (a .json file). ` +
        `To import a folder of Markdown files, as engram export --format markdown writes: engram import --from markdown ${file}. ` +
        `Other memories kept as a folder: ${OTHER_FOLDER_KINDS.map((kind) => `--from ${kind}`).join(', ')} ` +
        '(engram import --help says what each kind reads).',
    );
  }
  return readBounded(file, {
    bytes: MAX_SOURCE_BYTES,
    what: 'one import reads (256 MB)',
    instead: 'an export document is far smaller; name the file engram export wrote',
  }).toString('utf8');
}

/**
 * Writes an export, piece by piece as it is read, to a file readable by its owner alone,
 * even over an existing file that others could read.
 */
async function writePrivateFile(path: string, pieces: AsyncIterable<string>): Promise<void> {
  const fd = openSync(path, 'w', 0o600);
  try {
    // The mode given to open applies only to a new file; a device such as /dev/stdout keeps its own.
    if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
    for await (const piece of pieces) writeSync(fd, piece);
  } finally {
    closeSync(fd);
  }
}

/** Without trash retention (trashRetentionDays 0), what is dropped is purged at once. */
function describeReport(report: ImportReport, purged: boolean): string {
  const line = (label: string, names: string[]) =>
    names.length > 0 ? `${label} (${names.length}): ${names.join(', ')}` : '';
  const lines = [
    report.dryRun ? 'Dry run: nothing was changed.' : '',
    line('created', report.created),
    line('updated', report.updated),
    line('unchanged', report.unchanged),
    line(purged ? 'dropped and purged for good' : 'dropped to the trash', report.dropped),
    line('conflicts, left as they were (pass --overwrite to replace them)', report.conflicts),
    line('skipped: their groups cannot be written by the model (pass --all-groups to import them)', report.skipped),
  ].filter(Boolean);
  return lines.length > 0 ? lines.join('\n') : 'The file holds no entries; nothing to import.';
}

export function registerTransferCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('export'))
    .description(
      'Write the whole memory as one JSON document (format: docs/export-format.md), or as a folder of Markdown files',
    )
    .argument('[dir]', 'with --format markdown: the folder to write (new, empty, or an earlier markdown export)')
    .addOption(
      new Option('--format <format>', 'json, or markdown: one group/slug.md file per entry and a README.md index')
        .choices(['json', 'markdown'])
        .default('json'),
    )
    .option('--out <file>', 'write to a file (default: stdout)')
    .option('--with-history', 'include every revision and the trash')
    .option('--force', 'with --format markdown: overwrite or delete files edited since the last export')
    .action(
      (
        dir: string | undefined,
        options: CommonOptions & { format: string; out?: string; withHistory?: boolean; force?: boolean },
      ) =>
        run(
          options,
          async (context, output) => {
            const caller = cliCaller(context);
            if (options.format === 'markdown') {
              if (!dir)
                throw new UsageError(
                  '--format markdown writes a folder: name it, as in engram export --format markdown ./memory',
                );
              if (options.out || options.withHistory)
                throw new UsageError('--out and --with-history are for the JSON export');
              const { entries } = await context.transfer.export(caller);
              const { removed, overwritten } = writeMarkdownExport(
                dir,
                markdownExport(entries),
                options.force === true,
              );
              const gone = removed > 0 ? ` (removed ${removed} file(s) of entries no longer in memory)` : '';
              const forced =
                overwritten.length > 0
                  ? `\nOverwrote or deleted ${overwritten.length} file(s) changed since the last export (--force): ${overwritten.join(', ')}`
                  : '';
              output.result(`Exported ${entries.length} entries to ${dir}${gone}${forced}`, {
                dir,
                entries: entries.length,
                removed,
                overwritten,
              });
              return;
            }
            if (dir)
              throw new UsageError(
                `a folder (${dir}) is for --format markdown; the JSON export goes to --out FILE or stdout`,
              );
            if (options.force) throw new UsageError('--force goes with --format markdown');
            const pieces = context.transfer.exportText(caller, { withHistory: options.withHistory === true });
            if (options.out) {
              const count = (await context.memory.index(caller)).length;
              await writePrivateFile(options.out, pieces);
              output.note(`Exported ${count} entries to ${options.out}`);
            } else {
              for await (const piece of pieces) output.exact(piece);
            }
          },
          'reads',
        ),
    );

  common(program.command('import'))
    .description(
      'Import an export document: merge (keep what exists, add what is new) or replace everything; ' +
        'or, with --from, a memory kept by another system (docs/import.md)',
    )
    .argument('<file>', 'the JSON document ("-" for stdin), or with --from the file or folder to read')
    .addOption(new Option('--from <kind>', 'import from another memory system (see below)').choices(BRIDGE_KINDS))
    .option('--split', 'with --from: split an item over the entry cap into -2, -3 entries (else it is refused)')
    .option(
      '--map <type=group>',
      'with --from server-memory: put entities of this entityType in this group (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--name <group/slug>',
      'with --from chatgpt: the entry the memories go to (default topics/chatgpt-memories); with --from claude-code: the entry MEMORY.md becomes (default topics/claude-code-memory)',
    )
    .addOption(new Option('--mode <mode>', 'merge or replace').choices(['merge', 'replace']).default('merge'))
    .option('--overwrite', 'in merge mode, overwrite entries whose content differs')
    .option('--dry-run', 'say what would happen, change nothing')
    .option('--all-groups', 'also import entries of groups the model cannot write (they are skipped otherwise)')
    .action((file: string, options: CommonOptions & ImportFromOptions & { from?: BridgeKind }) =>
      run(
        options,
        async (context, output) => {
          if (context.absent) {
            output.note(
              `${context.database} does not exist yet: this dry run previews the import into an empty memory and creates nothing.`,
            );
          }
          if (options.from) return importFrom(context, output, options.from, file, options);
          if (options.split || options.map || options.name)
            throw new UsageError('--split, --map and --name go with --from');
          const document = context.transfer.parse(readDocument(file));
          const report = await context.transfer.import(cliCaller(context), document, {
            mode: options.mode,
            overwrite: options.overwrite === true,
            dryRun: options.dryRun === true,
            allGroups: options.allGroups === true,
          });
          output.result(describeReport(report, context.settings.policy.trashRetentionDays === 0), report);
        },
        // A dry run changes nothing, so it creates no database either.
        options.dryRun ? 'previews' : 'creates',
      ),
    );

  program.commands
    .find((command) => command.name() === 'import')
    ?.addHelpText(
      'after',
      `
Import from another memory system: engram import --from KIND PATH [--dry-run] [--split]
  One transaction, recorded in history as import:KIND. An entry that exists already gets the
  imported text appended (markdown: a conflict, as above). Try --dry-run first.
${BRIDGE_KINDS.map((kind) => `  ${kind.padEnd(18)}${BRIDGES[kind].summary}`).join('\n')}

Examples:
  engram import --from server-memory memory.jsonl --dry-run
  engram import --from chatgpt memories.txt --name topics/chatgpt-memories
Where each file lives and what it becomes: docs/import.md`,
    );

  common(program.command('wipe'))
    .description(
      "Empty this user's memory: every entry goes to the trash (undrop brings them back), or is purged for good with trashRetentionDays 0",
    )
    .option('--yes-i-am-sure', 'required: confirms the wipe')
    .action((options: CommonOptions & { yesIAmSure?: boolean }) =>
      run(options, async (context, output) => {
        if (!options.yesIAmSure) throw new UsageError('wipe empties the whole memory: pass --yes-i-am-sure to confirm');
        const count = await context.transfer.wipe(cliCaller(context));
        if (context.settings.policy.trashRetentionDays === 0) {
          output.result(`Purged ${count} entries for good: trashRetentionDays is 0, so nothing went to the trash.`, {
            dropped: count,
            purged: true,
          });
        } else output.result(`Moved ${count} entries to the trash.`, { dropped: count });
      }),
    );
}
