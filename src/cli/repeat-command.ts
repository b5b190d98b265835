/**
 * A command line to run again: a hint such as the next page of `engram activity` must
 * repeat every option that shaped what was shown (--actor, --limit, --db, --user, …), or
 * it shows the next page of another listing. Built from what commander parsed, so an
 * option added later is repeated too; options set by the environment or the config file
 * still hold when the hint is run, so only those given on the command line are repeated.
 * An option that may carry a secret (--database-url's password) is marked where it is
 * declared (bearsSecret), and repeated only without it: a hint lands in terminals,
 * scrollback and logs, which must not hold a password.
 */

import type { Command, Option } from 'commander';
import { shellWord } from '../memory/model/shell-word.js';

/**
 * A secret-bearing option's value as it may be repeated: `value` without the secret
 * (undefined: the option is left out), and a note saying what was left out and how to
 * give it, when anything was.
 */
export type WithoutSecret = (value: string) => { readonly value: string | undefined; readonly note?: string };

const secretBearing = new WeakMap<Option, WithoutSecret>();

/** Marks `option` as one that may carry a secret: a repeated command line shows it only through `withoutSecret`. */
export function bearsSecret(option: Option, withoutSecret: WithoutSecret): Option {
  secretBearing.set(option, withoutSecret);
  return option;
}

/** A command line to run again, and the notes on what was left out of it (a secret). */
export interface RepeatedCommand {
  readonly line: string;
  readonly notes: readonly string[];
}

/**
 * `engram <command> ...` with the options given to `command` on its command line, but
 * those in `except` (by long flag), then `extra` words (already flags and values).
 */
export function repeatCommand(command: Command, except: readonly string[], extra: readonly string[]): RepeatedCommand {
  const values = command.opts();
  const words: string[] = [];
  const notes: string[] = [];
  for (const option of command.options) {
    const key = option.attributeName();
    if (!option.long || except.includes(option.long) || command.getOptionValueSource(key) !== 'cli') continue;
    const value: unknown = values[key];
    const withoutSecret = secretBearing.get(option);
    if (withoutSecret !== undefined && typeof value === 'string') {
      const shown = withoutSecret(value);
      if (shown.note !== undefined) notes.push(shown.note);
      if (shown.value !== undefined) words.push(option.long, shellWord(shown.value));
    } else if (value === true) words.push(option.long);
    else if (Array.isArray(value)) for (const each of value) words.push(option.long, shellWord(String(each)));
    else if (value !== undefined && value !== false) words.push(option.long, shellWord(String(value)));
  }
  const path: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) path.unshift(at.name());
  return { line: [...path, ...words, ...extra].join(' '), notes };
}
