/**
 * A word as a POSIX shell reads it back, for the commands Engram suggests (the CLI's hints,
 * the server's log): a value a person pastes (a user name, a folder, a page's origin) must
 * reach the command as one word and never run as a command of its own.
 */

/** `word` bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
