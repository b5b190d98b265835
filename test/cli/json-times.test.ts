/**
 * Every --json output of every command gives times one way: ISO 8601 in UTC, with
 * milliseconds, as the export document does. Walked generically: no number that reads as a
 * time in milliseconds (any within the years 1973-5138) may appear anywhere in any output,
 * so a new field or command that prints one fails here.
 */

import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cli, ok } from './fixtures.js';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Every number in `value` that could be a time in milliseconds, and every ISO time string, by their paths. */
function times(value: unknown, path = '$'): { numbers: string[]; isoStrings: string[] } {
  const found = { numbers: [] as string[], isoStrings: [] as string[] };
  const visit = (node: unknown, at: string) => {
    if (typeof node === 'number' && node >= 1e11 && node < 1e14) found.numbers.push(`${at} = ${node}`);
    else if (typeof node === 'string' && ISO_UTC.test(node)) found.isoStrings.push(at);
    else if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${at}[${index}]`);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) visit(child, `${at}.${key}`);
    }
  };
  visit(value, path);
  return found;
}

describe('--json times', () => {
  it('are ISO 8601 UTC strings in every command’s output, never milliseconds', async () => {
    const engram = cli();
    const document = engram.dir.file('doc.json');
    writeFileSync(
      document,
      JSON.stringify({
        format: 'engram-export',
        version: 1,
        entries: [{ name: 'topics/imported', description: 'Imported', body: 'x\n' }],
      }),
    );
    const commands = [
      ['write', 'topics/tea', '-d', 'Tea', '--new', 'Green tea.'],
      ['write', 'topics/tea', '--old', 'Green', '--new', 'Black'],
      ['write', 'topics/gone', '-d', 'Gone', '--new', 'Soon gone.'],
      ['index'],
      ['open', 'topics/tea'],
      ['search', 'tea'],
      ['history', 'topics/tea'],
      ['show', 'topics/tea', '--rev', '1'],
      ['diff', 'topics/tea', '--rev', '1'],
      ['restore', 'topics/tea', '--rev', '1'],
      ['activity'],
      ['drop', 'topics/gone'],
      ['trash'],
      ['undrop', 'topics/gone'],
      ['token', 'create', '--label', 'laptop'],
      ['token', 'list'],
      ['user', 'list'],
      ['import', document],
      ['export'],
      ['purge', 'topics/gone', '--force'],
      ['wipe', '--yes-i-am-sure'],
    ];
    const withIso: string[] = [];
    for (const command of commands) {
      const output = JSON.parse(await ok(engram.run(...command, '--json')));
      const { numbers, isoStrings } = times(output, command.join(' '));
      expect(numbers).toEqual([]);
      withIso.push(...isoStrings);
    }
    // The walk saw times where there are some: it did not pass for finding none.
    for (const command of ['write', 'open', 'search', 'history', 'show', 'activity', 'trash', 'token list']) {
      expect(
        withIso.some((path) => path.startsWith(command)),
        command,
      ).toBe(true);
    }
  });
});
