/**
 * `engram duplicates` and `engram merge` (memory/tidy.ts): the pairs of entries that may be
 * one — each with its score, why it is listed, and both entries' descriptions and sizes —
 * and the merge of one into the other, which prints its id and how to undo it. `merge`
 * reads both entries' revisions itself, just before merging.
 */

import { type Command, InvalidArgumentError } from 'commander';
import { normalizeName } from '../memory/model/names.js';
import { countOf, formatCount } from '../memory/model/text.js';
import {
  DUPLICATES_LIMIT_CAP,
  DUPLICATES_LIMIT_DEFAULT,
  type DuplicatePair,
  type DuplicateSide,
  type Duplicates,
  type MergeResult,
} from '../memory/tidy.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';

interface DuplicatesOptions extends CommonOptions {
  readonly limit?: number;
}

function limit(value: string): number {
  const number = Number(value);
  if (!/^[0-9]+$/.test(value) || number < 1 || number > DUPLICATES_LIMIT_CAP) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${DUPLICATES_LIMIT_CAP}.`);
  }
  return number;
}

const twoDecimals = (value: number) => value.toFixed(2);

function sideLine(side: DuplicateSide, width: number): string {
  return `      ${side.name.padEnd(width)}  ${side.description}  (${formatCount(side.size)} bytes)`;
}

/** A pair: its score and why, both entries, and each field's similarity. */
function pairLines(pair: DuplicatePair): string[] {
  const width = Math.max(pair.a.name.length, pair.b.name.length);
  const { name, description, body } = pair.similarity;
  return [
    `${twoDecimals(pair.score)}  close ${pair.reasons.join(', ')}`,
    sideLine(pair.a, width),
    sideLine(pair.b, width),
    `      similarity: name ${twoDecimals(name)}, description ${twoDecimals(description)}, body ${twoDecimals(body)}`,
  ];
}

function duplicatesText(found: Duplicates): string {
  const among = `among ${countOf(found.examined, 'entry', 'entries')}`;
  if (found.pairs.length === 0) return `No possible duplicates ${among}.`;
  const lines = [
    `${countOf(found.pairs.length, 'possible duplicate', 'possible duplicates')} ${among}, closest first:`,
    ...found.pairs.flatMap(pairLines),
  ];
  if (found.truncated) {
    lines.push(`More pairs may be close: list more with --limit N (at most ${DUPLICATES_LIMIT_CAP}).`);
  }
  lines.push('Merge one into the other with: engram merge FROM INTO (FROM goes to the trash).');
  return lines.join('\n');
}

/** The listing for --json: the pairs as listed (similarities to two decimals), the entries compared, whether cut. */
function duplicatesJson(found: Duplicates) {
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    pairs: found.pairs.map((pair) => ({
      ...pair,
      score: round(pair.score),
      similarity: {
        name: round(pair.similarity.name),
        description: round(pair.similarity.description),
        body: round(pair.similarity.body),
      },
    })),
    examined: found.examined,
    truncated: found.truncated,
  };
}

function mergeText(result: MergeResult): string {
  return [
    `Merged ${result.dropped} into ${result.into} as merge ${result.id}: ${result.into} holds its description and ` +
      `body under "## Merged from ${result.dropped}", and ${result.dropped} is in the trash.`,
    `Undo it with: engram revert --undo ${result.id}`,
  ].join('\n');
}

export function registerTidyCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('duplicates'))
    .description('List pairs of entries that may be one: close names, descriptions or bodies, closest first')
    .option(
      '--limit <n>',
      `list at most n pairs, 1 to ${DUPLICATES_LIMIT_CAP} (default ${DUPLICATES_LIMIT_DEFAULT})`,
      limit,
    )
    .addHelpText(
      'after',
      '\nEach pair shows its score (0 to 1), the fields close enough to list it (name, description, body),\n' +
        'both entries with their descriptions and sizes, and how close each field is. Only the first 16 KiB\n' +
        'of a body are compared. Merge a pair with engram merge FROM INTO.\n\n' +
        'Examples:\n' +
        '  engram duplicates\n' +
        '  engram duplicates --limit 200 --json',
    )
    .action((options: DuplicatesOptions) =>
      run(
        options,
        async (context, output) => {
          const found = await context.memory.tidy.duplicates(cliCaller(context), { limit: options.limit });
          output.result(duplicatesText(found), duplicatesJson(found));
        },
        'reads',
      ),
    );

  common(program.command('merge'))
    .description('Merge one entry into another: INTO receives FROM’s description and body, FROM goes to the trash')
    .argument('<from>', 'the entry merged in, then dropped to the trash')
    .argument('<into>', 'the entry that receives it; its description stays as it is')
    .addHelpText(
      'after',
      '\nINTO’s body becomes its body, then a heading "## Merged from FROM", FROM’s description and FROM’s\n' +
        'body. Both changes are one event in history: engram revert --undo ID (the id merge prints) brings\n' +
        'FROM back from the trash and INTO’s body back as it was.\n\n' +
        'Examples:\n' +
        '  engram merge topics/coffees topics/coffee\n' +
        '  engram revert --undo mjx2k9a0-3f9c1b2e',
    )
    .action((from: string, into: string, options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const caller = cliCaller(context);
          const { found } = await context.memory.open(caller, [from, into]);
          // A missing entry is refused by the merge itself, in its words, whatever revision it is given.
          const revisionOf = (name: string) => found.find((entry) => entry.name === normalizeName(name))?.revision ?? 1;
          const request = { from, into, fromRevision: revisionOf(from), intoRevision: revisionOf(into) };
          const result = await context.memory.tidy.merge(caller, request);
          output.result(mergeText(result), result);
        },
        'reads',
      ),
    );
}
