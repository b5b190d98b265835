/**
 * `engram token create | list | revoke`: the bearer tokens of `engram serve --auth token`.
 * A new token is printed once, alone on the last line of stdout (so `| tail -n 1` gets
 * it); nothing ever prints it again, since only its SHA-256 is kept.
 */

import type { Command } from 'commander';
import type { TokenInfo } from '../core/access.js';
import type { CommonOptions } from './context.js';
import type { Run } from './entries.js';

interface CreateOptions extends CommonOptions {
  readonly readOnly?: boolean;
  readonly label?: string;
}

function time(ms: number | undefined): string {
  return ms === undefined ? 'never' : `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

function access(info: TokenInfo): string {
  return info.readOnly ? 'read-only' : 'read-write';
}

function tokenJson(info: TokenInfo) {
  return {
    id: info.id,
    user: info.user,
    label: info.label,
    readOnly: info.readOnly,
    created: new Date(info.created).toISOString(),
    lastUsed: info.lastUsed === undefined ? null : new Date(info.lastUsed).toISOString(),
  };
}

/** One aligned row per token; the label last, since it may contain spaces. */
function tokenTable(tokens: readonly TokenInfo[]): string {
  if (tokens.length === 0)
    return 'No tokens. Create one with: engram token create --user NAME [--read-only] [--label TEXT]';
  const rows = [
    ['ID', 'USER', 'ACCESS', 'CREATED', 'LAST USED', 'LABEL'],
    ...tokens.map((t) => [t.id, t.user, access(t), time(t.created), time(t.lastUsed), t.label]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function registerTokenCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  const token = program
    .command('token')
    .description('Manage the bearer tokens of engram serve --auth token (one user each, read-write or read-only)');

  common(token.command('create'))
    .description('Create a token for --user (default "local"); it is printed once, alone on the last line')
    .option('--read-only', 'the token can use memory_open but not memory_write or memory_drop')
    .option('--label <text>', 'who uses the token, recorded as the author of its changes (e.g. "llama.cpp WebUI")')
    .action((options: CreateOptions) =>
      run(options, async (context, output) => {
        const issued = await context.access.create({
          user: context.user,
          label: options.label,
          readOnly: options.readOnly,
        });
        const { info } = issued;
        output.result(
          [
            `Created token ${info.id} for user ${JSON.stringify(info.user)} (${access(info)}), label ${JSON.stringify(info.label)}.`,
            'It is shown only this once; clients send it as the header "Authorization: Bearer <token>":',
            issued.token,
          ].join('\n'),
          { ...tokenJson(info), token: issued.token },
        );
      }),
    );

  common(token.command('list'))
    .description('List the tokens: id, user, access, created, last used, label (never the tokens themselves)')
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const tokens = await context.access.list();
          output.result(tokenTable(tokens), tokens.map(tokenJson));
        },
        'reads',
      ),
    );

  common(token.command('revoke'))
    .description('Revoke a token by its id; the next request that presents it is refused')
    .argument('<id>', 'the token id, as engram token list shows it')
    .action((id: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        await context.access.revoke(id);
        output.result(`Revoked token ${id.trim()}: requests that present it are refused from now on.`, {
          revoked: id.trim(),
        });
      }),
    );
}
