/**
 * A command line to run again: a hint such as the next page of `engram activity` must
 * repeat every option that shaped what was shown (--actor, --limit, --db, --user, …), or
 * it shows the next page of another listing. Built from what commander parsed, so an
 * option added later is repeated too; options set by the environment or the config file
 * still hold when the hint is run, so only those given on the command line are repeated.
 */

import type { Command } from 'commander';

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * `engram <command> ...` with the options given to `command` on its command line, but
 * those in `except` (by long flag), then `extra` words (already flags and values).
 */
export function repeatCommand(command: Command, except: readonly string[], extra: readonly string[]): string {
  const values = command.opts();
  const words: string[] = [];
  for (const option of command.options) {
    const key = option.attributeName();
    if (!option.long || except.includes(option.long) || command.getOptionValueSource(key) !== 'cli') continue;
    const value: unknown = values[key];
    if (value === true) words.push(option.long);
    else if (Array.isArray(value)) for (const each of value) words.push(option.long, shellWord(String(each)));
    else if (value !== undefined && value !== false) words.push(option.long, shellWord(String(value)));
  }
  const path: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) path.unshift(at.name());
  return [...path, ...words, ...extra].join(' ');
}
