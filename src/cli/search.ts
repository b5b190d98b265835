/**
 * `engram search QUERY`: full-text search of one's memory from the command line, the
 * same search as the web UI's (memory/search.ts). Each hit is its name and description,
 * then a line of its body around the words found; on a terminal the words found are
 * highlighted, elsewhere the lines are plain. --json gives scripts the hits as they are.
 */

import { type Command, InvalidArgumentError } from 'commander';
import type { SearchHit, SearchSnippet } from '../memory/search.js';
import { SEARCH_DEFAULT_LIMIT, SEARCH_LIMIT_CAP } from '../memory/search.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';
import type { Piece } from './output.js';

interface SearchOptions extends CommonOptions {
  readonly limit?: number;
}

function limit(value: string): number {
  const number = Number(value);
  if (!/^[0-9]+$/.test(value) || number < 1) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${SEARCH_LIMIT_CAP}.`);
  }
  return number;
}

export function registerSearchCommand(program: Command, common: (command: Command) => Command, run: Run): void {
  common(program.command('search'))
    .description('Find entries by the words of their names, descriptions and bodies (the last word may be unfinished)')
    .argument('<query...>', 'the words to find, e.g. engram search green tea')
    .option('--limit <n>', `show at most n hits, 1 to ${SEARCH_LIMIT_CAP} (default ${SEARCH_DEFAULT_LIMIT})`, limit)
    .action((words: string[], options: SearchOptions) =>
      run(
        options,
        async (context, output) => {
          const query = words.join(' ');
          const hits = await context.memory.search(cliCaller(context), query, { limit: options.limit });
          const lines = hits.length === 0 ? [[{ text: `Nothing found for: ${query}` }]] : hits.flatMap(hitLines);
          output.marked(lines, { hits });
        },
        'reads',
      ),
    );
}

/** `name: description`, then the body's snippet indented, if the body holds a word found. */
function hitLines(hit: SearchHit): Piece[][] {
  const of = (field: SearchSnippet['field']) => hit.snippets.find((snippet) => snippet.field === field);
  const name = of('name');
  const description = of('description');
  const body = of('body');
  const head = [
    ...(name ? pieces(name) : [{ text: hit.name }]),
    { text: ': ' },
    ...(description ? pieces(description) : [{ text: hit.description }]),
  ];
  return body ? [head, [{ text: '  ' }, ...pieces(body)]] : [head];
}

/** The snippet's text cut at its matches, the matches marked. */
function pieces(snippet: SearchSnippet): Piece[] {
  const result: Piece[] = [];
  let at = 0;
  for (const [start, end] of snippet.matches) {
    if (start > at) result.push({ text: snippet.text.slice(at, start) });
    result.push({ text: snippet.text.slice(start, end), marked: true });
    at = end;
  }
  if (at < snippet.text.length) result.push({ text: snippet.text.slice(at) });
  return result;
}
