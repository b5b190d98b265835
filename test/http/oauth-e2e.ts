/**
 * What the end-to-end OAuth tests share: `engram serve --auth oauth` started as an operator
 * starts it (the built CLI as a child process, on a fresh SQLite file or PostgreSQL
 * database, its users added with `engram user add --password-stdin`), the CLI run on the
 * same database, a look at what the database holds of grants, tokens and sessions, the
 * app's loopback redirect URI (a small HTTP server that catches where the browser lands),
 * the consent page played in Chromium as a person plays it, and an MCP SDK v1
 * OAuthClientProvider that keeps its state in memory and sends the user to that page.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens as SdkTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Browser, Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { runInProcess } from '../cli/fixtures.js';
import { type EngramDatabase, SQLITE_BACKEND, type TestBackend } from '../helpers/backends.js';
import { childEnv, ENGRAM_CLI, tempDir } from '../helpers/engram.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';

export const PASSWORD = 'correct horse battery staple';

/** A connected app as `engram token list --json` shows it. */
export interface AppRow {
  readonly kind: 'app';
  readonly id: string;
  readonly user: string;
  readonly label: string;
  readonly clientId: string;
  readonly readOnly: boolean;
  readonly scopes: readonly string[];
}

/** What the database holds of OAuth's issuing: grants (connected apps), their codes and tokens, browser sessions. */
export interface Issued {
  readonly grants: number;
  readonly secrets: number;
  readonly sessions: number;
}

export const NOTHING_ISSUED: Issued = { grants: 0, secrets: 0, sessions: 0 };

export interface EngramOAuthServer {
  /** The listening (and public) origin, http://127.0.0.1:<port>. */
  readonly origin: string;
  /** Its MCP endpoint. */
  readonly mcpUrl: URL;
  readonly database: EngramDatabase;
  /** What the server logged so far. */
  stderr(): string;
  /** Runs `engram ARGS` on the server's database and config; rejects unless it exits 0. */
  cli(args: readonly string[], input?: string): Promise<string>;
  /** The connected apps, from `engram token list --json`. */
  apps(): Promise<AppRow[]>;
  /** Counted in the database itself, behind every front door. */
  issued(): Promise<Issued>;
}

export interface EngramOAuthOptions {
  readonly backend?: TestBackend;
  /** The config file's contents (none by default). */
  readonly config?: unknown;
  /** More environment for the server (NODE_EXTRA_CA_CERTS). */
  readonly env?: Record<string, string>;
  /** Users added before the server starts, with their passwords (default: ada). */
  readonly users?: Readonly<Record<string, string>>;
}

/** Starts `engram serve --auth oauth --port 0 --json` on a fresh database; killed when the test ends. */
export async function startEngramOAuth(options: EngramOAuthOptions = {}): Promise<EngramOAuthServer> {
  const dir = tempDir();
  const database = await (options.backend ?? SQLITE_BACKEND).create(dir);
  const env = childEnv(dir.path);
  const common = [...database.args, ...(options.config === undefined ? [] : ['--config', dir.config(options.config)])];
  // The operator's other commands (user add, token list, ...) run main() in this process:
  // serve is the door under test, and a spawn costs some 0.3 s of CPU. Passwords are
  // hashed at the tests' cost, which the server's sign-ins then check at (it is in the
  // hash): the consent flow is under test here, not scrypt (test/access/accounts covers that cost).
  const cli = async (args: readonly string[], input = '') => {
    const run = await runInProcess([...args, ...common], env, input, { passwordCost: TEST_PASSWORD_COST });
    if (run.code !== 0) throw new Error(`engram ${args.join(' ')} exited with ${run.code}:\n${run.stderr}`);
    return run.stdout;
  };
  for (const [user, password] of Object.entries(options.users ?? { ada: PASSWORD })) {
    await cli(['user', 'add', user, '--password-stdin'], `${password}\n`);
  }
  const child = spawn(process.execPath, [ENGRAM_CLI, 'serve', '--auth', 'oauth', '--port', '0', '--json', ...common], {
    env: { ...env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => stop(child));
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) resolve(JSON.parse(line) as { url: string });
    });
    child.once('exit', (code) => reject(new Error(`engram serve exited with ${code} before serving:\n${stderr}`)));
  });
  const count = async (table: string) =>
    Number((await database.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);
  return {
    origin: new URL(url).origin,
    mcpUrl: new URL(url),
    database,
    stderr: () => stderr,
    cli,
    apps: async () =>
      (JSON.parse(await cli(['token', 'list', '--json'])) as { kind: string }[]).filter(
        (row): row is AppRow => row.kind === 'app',
      ),
    issued: async () => ({
      grants: await count('grants'),
      secrets: await count('grant_secrets'),
      sessions: await count('sessions'),
    }),
  };
}

/** Kills the server at once and waits until it has exited. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** The app's side of the redirect: a loopback listener, as a native app or the MCP SDK's CLI examples run one. */
export interface RedirectTarget {
  /** http://127.0.0.1:<port>/callback */
  readonly redirectUri: string;
  /** The query of the next time the browser lands on the redirect URI. */
  next(): Promise<URLSearchParams>;
}

/** Listens on 127.0.0.1 on a free port; closed (connections cut) when the test ends. */
export async function startRedirectTarget(): Promise<RedirectTarget> {
  const landed: URLSearchParams[] = [];
  const waiting: ((query: URLSearchParams) => void)[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Back in the app</title><p id="back">Back in the app.</p>');
    const waiter = waiting.shift();
    if (waiter) waiter(url.searchParams);
    else landed.push(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => {
      const early = landed.shift();
      return early ? Promise.resolve(early) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** What the person does on the consent page. */
export interface ConsentChoice {
  readonly user?: string;
  readonly password?: string;
  readonly readOnly?: boolean;
  readonly review?: boolean;
  readonly decision: 'allow' | 'deny';
}

/** Opens `url` in a fresh browser context (closed when the test ends), as a person following the app's link. */
export async function openInBrowser(browser: Browser, url: URL | string): Promise<Page> {
  const context = await browser.newContext();
  onTestFinished(() => context.close());
  const page = await context.newPage();
  await page.goto(String(url));
  return page;
}

/** Signs in with the fields labelled User and Password, chooses Read only or review if asked, and presses Allow or Deny. */
export async function decide(page: Page, choice: ConsentChoice): Promise<void> {
  if (choice.user !== undefined) await page.getByLabel('User').fill(choice.user);
  if (choice.password !== undefined) await page.getByLabel('Password').fill(choice.password);
  if (choice.readOnly) await page.getByRole('radio', { name: 'Read only' }).check();
  if (choice.review) await page.getByRole('radio', { name: 'Changes need my review' }).check();
  await page.getByRole('button', { name: choice.decision === 'allow' ? 'Allow' : 'Deny' }).click();
}

/** What happened on the consent page: its heading and text, and the query the browser landed with. */
export interface ConsentSeen {
  readonly heading: string;
  readonly text: string;
  readonly landed: URLSearchParams;
}

/** The person in the browser: opens the authorization URL, decides, and waits to land back on the app. */
export function personInBrowser(browser: Browser, target: RedirectTarget, choice: ConsentChoice) {
  const seen: ConsentSeen[] = [];
  const consent = async (url: URL): Promise<URLSearchParams> => {
    const page = await openInBrowser(browser, url);
    const heading = (await page.locator('h1').textContent()) ?? '';
    const text = (await page.locator('main').textContent()) ?? '';
    const landing = target.next();
    await decide(page, choice);
    const landed = await landing;
    await page.context().close();
    seen.push({ heading, text, landed });
    return landed;
  };
  return { consent, seen };
}

/** Logs every request a client makes, as `METHOD /path STATUS`, passing it on unchanged. */
export function loggingFetch(log: string[]): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    log.push(`${init?.method ?? 'GET'} ${new URL(url).pathname} ${response.status}`);
    return response;
  };
}

/**
 * An MCP SDK client provider as an app keeps one: client information, tokens and the PKCE
 * verifier in memory; sending the user to the consent page is `consent`'s job (the
 * browser), and each query the browser came back with is kept in `returns`.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: SdkTokens | undefined;
  verifier: string | undefined;
  /** The `state` of the latest authorization request, which the browser must bring back. */
  lastState: string | undefined;
  /** Every authorization URL the SDK sent the user to. */
  readonly authorizationUrls: URL[] = [];
  /** What the browser brought back each time. */
  readonly returns: URLSearchParams[] = [];
  readonly clientMetadataUrl?: string;

  constructor(
    readonly redirectUrl: string,
    private readonly name: string,
    private readonly consent: (url: URL) => Promise<URLSearchParams | undefined>,
    clientMetadataUrl?: string,
  ) {
    if (clientMetadataUrl !== undefined) this.clientMetadataUrl = clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /** The code the browser brought back last. */
  get code(): string {
    const code = this.returns.at(-1)?.get('code');
    if (!code) throw new Error(`the browser came back without a code: ${this.returns.at(-1)}`);
    return code;
  }

  state() {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: SdkTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (this.verifier === undefined) throw new Error('no code verifier saved');
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
    const back = await this.consent(url);
    if (back !== undefined) this.returns.push(back);
  }
}
