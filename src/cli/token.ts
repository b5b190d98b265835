/**
 * `engram token create | list | revoke`: the bearer tokens of `engram serve --auth token`,
 * and beside them the connected apps of `--auth oauth` (one user's grant to one OAuth
 * client, with every token it holds), listed and revoked the same way. A new token is
 * printed once, alone on the last line of stdout (so `| tail -n 1` gets it); nothing
 * ever prints it again, since only its SHA-256 is kept.
 */

import type { Command } from 'commander';
import type { AppInfo } from '../access/oauth/tokens.js';
import { SCOPE_WRITE } from '../access/oauth/types.js';
import type { TokenInfo } from '../access/tokens/access.js';
import { EngramError, isEngramError } from '../memory/model/errors.js';
import type { CommonOptions, Context } from './context.js';
import type { Run } from './entries.js';

interface CreateOptions extends CommonOptions {
  readonly readOnly?: boolean;
  readonly review?: boolean;
  readonly label?: string;
}

function time(ms: number | undefined): string {
  return ms === undefined ? 'never' : `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

function access(info: Pick<TokenInfo, 'readOnly' | 'review'>): string {
  if (info.readOnly) return 'read-only';
  return info.review ? 'review' : 'read-write';
}

function tokenJson(info: TokenInfo) {
  return {
    kind: 'token',
    id: info.id,
    user: info.user,
    label: info.label,
    readOnly: info.readOnly,
    review: info.review,
    created: info.created,
    lastUsed: info.lastUsed ?? null,
  };
}

function appReadOnly(app: AppInfo): boolean {
  return !app.scopes.includes(SCOPE_WRITE);
}

function appJson(app: AppInfo) {
  return {
    kind: 'app',
    id: app.id,
    user: app.user,
    label: app.name,
    clientId: app.clientId,
    readOnly: appReadOnly(app),
    review: app.review,
    scopes: app.scopes,
    created: app.created,
    lastUsed: app.lastUsed ?? null,
  };
}

/** One aligned row per token, then per app; the label (an app's name) last, since it may contain spaces. */
function tokenTable(tokens: readonly TokenInfo[], apps: readonly AppInfo[]): string {
  if (tokens.length === 0 && apps.length === 0) {
    return 'No tokens or connected apps. Create a token with: engram token create --user NAME [--read-only | --review] [--label TEXT]';
  }
  const rows = [
    ['ID', 'KIND', 'USER', 'ACCESS', 'CREATED', 'LAST USED', 'LABEL'],
    ...tokens.map((t) => [t.id, 'token', t.user, access(t), time(t.created), time(t.lastUsed), t.label]),
    ...apps.map((a) => [
      a.id,
      'app',
      a.user,
      access({ readOnly: appReadOnly(a), review: a.review }),
      time(a.created),
      time(a.lastUsed),
      a.name,
    ]),
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

/** Revokes the token or the connected app with this id, and says which it was. */
async function revoke(context: Context, rawId: string): Promise<{ text: string; kind: 'token' | 'app' }> {
  const id = rawId.trim();
  const app = (await context.oauth.tokens.listApps()).find((candidate) => candidate.id === id);
  if (app !== undefined && (await context.oauth.tokens.revokeApp(id))) {
    return {
      kind: 'app',
      text:
        `Revoked the connected app ${id} (${JSON.stringify(app.name)} for user ${JSON.stringify(app.user)}): ` +
        'every token it holds is refused from now on.',
    };
  }
  try {
    await context.access.revoke(id);
  } catch (error) {
    if (!isEngramError(error) || error.code !== 'NOT_FOUND') throw error;
    throw new EngramError(
      'NOT_FOUND',
      `no token or connected app has the id ${JSON.stringify(rawId)}; engram token list shows the ids.`,
    );
  }
  return { kind: 'token', text: `Revoked token ${id}: requests that present it are refused from now on.` };
}

export function registerTokenCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  const token = program
    .command('token')
    .description(
      'Manage the bearer tokens of engram serve --auth token (one user each, read-write, review or read-only), ' +
        'and the apps connected with --auth oauth',
    );

  common(token.command('create'))
    .description('Create a token for --user (default "local"); it is printed once, alone on the last line')
    .option('--read-only', 'the token can use memory_open but not memory_write or memory_drop')
    .option(
      '--review',
      "the token's memory_write and memory_drop are held for your review (engram review, or the web UI's Review page) instead of applied",
    )
    .option('--label <text>', 'who uses the token, recorded as the author of its changes (e.g. "llama.cpp WebUI")')
    .action((options: CreateOptions) =>
      run(options, async (context, output) => {
        const issued = await context.access.create({
          user: context.user,
          label: options.label,
          readOnly: options.readOnly,
          review: options.review,
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
    .description(
      'List the tokens and connected apps: id, kind, user, access, created, last used, label or app name ' +
        '(never the tokens themselves)',
    )
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const tokens = await context.access.list();
          const apps = await context.oauth.tokens.listApps();
          output.result(tokenTable(tokens, apps), [...tokens.map(tokenJson), ...apps.map(appJson)]);
        },
        'reads',
      ),
    );

  common(token.command('revoke'))
    .description(
      'Revoke a token, or a connected app with every token it holds, by its id; the next request that presents ' +
        'one is refused',
    )
    .argument('<id>', 'the id of the token or app, as engram token list shows it')
    .action((id: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        const revoked = await revoke(context, id);
        output.result(revoked.text, { revoked: id.trim(), kind: revoked.kind });
      }),
    );
}
