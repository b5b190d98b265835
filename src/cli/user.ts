/**
 * `engram user add | set-password | list | remove`: the people of this server and their
 * passwords. A password signs in to the consent page that OAuth apps (ChatGPT, Claude)
 * send a person to, and later to the web UI; never to /mcp, which takes tokens.
 */

import type { Command } from 'commander';
import { type AccountSummary, checkUserName, type RemovedUser, userNotFound } from '../access/accounts/accounts.js';
import { shellWord } from '../memory/model/shell-word.js';
import { countOf, formatCount } from '../memory/model/text.js';
import type { CommonOptions, Context } from './context.js';
import type { Run } from './entries.js';
import { UsageError } from './output.js';
import { type PasswordSource, readNewPassword } from './password-input.js';

interface PasswordOptions extends CommonOptions {
  readonly passwordStdin?: boolean;
}

interface RemoveOptions extends CommonOptions {
  readonly purge?: boolean;
  readonly yesIAmSure?: boolean;
}

/** Where the password of `engram user <command>` comes from, for its --help. */
function passwordHelp(command: string): string {
  return `
The password (at least 10 characters, one line) is never an argument, since arguments
show in ps and in shell history. At a terminal it is asked for twice, without echo.
Otherwise it is read from stdin, whole, without one trailing newline (\\n or \\r\\n):
  printf '%s\\n' 'correct horse battery staple' | engram user ${command} alice
  engram user ${command} alice --password-stdin < password.txt`;
}

/** One aligned row per user; the counts right-aligned. */
function userTable(users: readonly AccountSummary[]): string {
  if (users.length === 0) return 'No users yet. Add one with: engram user add NAME';
  const rows = [
    ['USER', 'PASSWORD', 'ENTRIES', 'BYTES', 'APPS', 'TOKENS'],
    ...users.map((u) => [
      u.user,
      u.hasPassword ? 'yes' : 'no',
      formatCount(u.entries),
      formatCount(u.bytes),
      String(u.apps),
      String(u.tokens),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function removedText(user: string, removed: RemovedUser, purged: boolean): string {
  const ended = [
    `${countOf(removed.sessions, 'browser session')} ended`,
    `${countOf(removed.tokens, 'token')} revoked`,
    `${countOf(removed.apps, 'connected app')} revoked`,
  ].join(', ');
  const memory = purged
    ? `${countOf(removed.entries, 'entry', 'entries')} erased for good, with their history and trash.`
    : `Their memory stays; to erase it for good: engram user remove ${shellWord(user)} --purge --yes-i-am-sure`;
  return `Removed user ${user}: ${ended}.\n${memory}`;
}

/** Whether the store knows `user` at all: checked before asking for a password to set. */
async function known(context: Context, user: string): Promise<boolean> {
  return (await context.accounts.list()).some((summary) => summary.user === user);
}

export function registerUserCommands(
  program: Command,
  common: (command: Command) => Command,
  run: Run,
  passwords: PasswordSource,
): void {
  const user = program
    .command('user')
    .description('Manage users and their passwords (to sign in to the consent page of ChatGPT, Claude and other apps)')
    .addHelpText(
      'after',
      `
A password signs in to the consent page an app opens when it connects (engram serve
--auth oauth), never to /mcp: assistants use tokens. Wrong passwords are slowed down
and logged. More in docs/accounts.md.`,
    );

  common(user.command('add'))
    .description('Add a user, with a password (asked for, or read from stdin) or none yet')
    .argument('<name>', 'the user name: 1-64 characters without spaces, lower-cased')
    .option('--password-stdin', 'read the password from stdin (a pipe or a file); an empty one is refused')
    .addHelpText(
      'after',
      `${passwordHelp('add')}
Without --password-stdin, an empty stdin that is not a terminal adds the user without a
password (engram user add alice < /dev/null): nobody can sign in as them until
engram user set-password sets one. Their memory is theirs either way.`,
    )
    .action((name: string, options: PasswordOptions) =>
      run(options, async (context, output) => {
        const user = checkUserName(name);
        const password = await readNewPassword(
          { user, fromStdin: options.passwordStdin === true, optional: true },
          passwords,
        );
        await context.accounts.create(user, password);
        const text =
          password === undefined
            ? `Added user ${user} without a password: nobody can sign in as ${user} until engram user set-password ${shellWord(user)}.`
            : `Added user ${user} with a password: they can sign in to the consent page.`;
        output.result(text, { user, hasPassword: password !== undefined });
      }),
    );

  common(user.command('set-password'))
    .description('Set or change a user’s password; browsers signed in as them are signed out')
    .argument('<name>', 'a user engram user list shows (one with memory but no password gets an account)')
    .option('--password-stdin', 'read the password from stdin (a pipe or a file)')
    .addHelpText('after', passwordHelp('set-password'))
    .action((name: string, options: PasswordOptions) =>
      run(
        options,
        async (context, output) => {
          const user = checkUserName(name);
          // Asking for a password only to refuse it afterwards would waste the person's typing.
          if (!(await known(context, user))) throw userNotFound(user);
          const password = await readNewPassword(
            { user, fromStdin: options.passwordStdin === true, optional: false },
            passwords,
          );
          await context.accounts.setPassword(user, password ?? '');
          output.result(`Set the password of ${user}; browsers signed in as ${user} were signed out.`, { user });
        },
        'reads',
      ),
    );

  common(user.command('list'))
    .description('List every user: name, password set, entries, bytes, connected apps, tokens')
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const users = await context.accounts.list();
          output.result(userTable(users), users);
        },
        'reads',
      ),
    );

  common(user.command('remove'))
    .description('Remove a user: sign them out everywhere and revoke their tokens and connected apps')
    .argument('<name>', 'the user name, as engram user list shows it')
    .option('--purge', 'also erase their memory for good: entries, history and trash (needs --yes-i-am-sure)')
    .option('--yes-i-am-sure', 'confirms --purge')
    .addHelpText(
      'after',
      `
Without --purge their memory stays, and engram user list still shows them for it; a
later engram user add gives them an account again.`,
    )
    .action((name: string, options: RemoveOptions) =>
      run(
        options,
        async (context, output) => {
          const user = checkUserName(name);
          const purge = options.purge === true;
          if (purge && !options.yesIAmSure) {
            throw new UsageError(
              `--purge erases the memory of ${user} for good: pass --yes-i-am-sure too to confirm, or leave --purge out to keep it`,
            );
          }
          const removed = await context.accounts.remove(user, { purge });
          output.result(removedText(user, removed, purge), { user, ...removed, purged: purge });
        },
        'reads',
      ),
    );
}
