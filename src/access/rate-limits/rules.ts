/**
 * Which rate limits `engram serve` holds, their defaults, and how a person changes them
 * (`--rate-limit`, ENGRAM_RATE_LIMIT, the config file's "rateLimit": one syntax for all
 * three). Pure: the counting is rate-limits.ts's, over a RateCounters port.
 *
 * Four limits, each a number of requests per window:
 * - `auth`: requests to the sign-in doors (the web UI's sign-in, /authorize, /token,
 *   /register) from one client address;
 * - `sign-in`: failed sign-ins naming one user (the web UI's and the consent page's): a
 *   correct password is not counted, and past the limit every sign-in as the user is refused;
 * - `mcp`: MCP requests of one token (/mcp requests and /ws messages together);
 * - `api`: REST requests of one token or signed-in browser (/api).
 *
 * The guards of the sign-in doors are on by default; the per-token ones are on when the
 * server has tokens (`--auth token` or `oauth`) and off on loopback without auth, where
 * the only caller is the person's own computer. Their numbers are far above what a real
 * assistant sends (docs/http.md says why): they stop a runaway loop or a leaked token,
 * not work.
 */

export const RATE_LIMIT_NAMES = ['auth', 'sign-in', 'mcp', 'api'] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

/**
 * The limits that guard load, not credentials: where several servers share counts
 * (PostgreSQL), each counts these itself and shares its counts in batches
 * (batched-counter.ts), so a request waits for no database; `auth` and `sign-in` are
 * counted in the shared store request by request, exactly.
 */
export const LOAD_LIMITS: ReadonlySet<RateLimitName> = new Set<RateLimitName>(['mcp', 'api']);

/** So many requests per window. */
export interface Rate {
  readonly points: number;
  readonly windowSeconds: number;
}

/** A limit in force: its name and its rate. */
export interface RateRule extends Rate {
  readonly name: RateLimitName;
}

/** Each limit's rate, or undefined when it is off. */
export type RateLimitRules = Readonly<Record<RateLimitName, Rate | undefined>>;

const MINUTE = 60;

/**
 * The numbers when a limit is on and nothing says otherwise.
 * - auth 60/min per address: a person signs in a few times a day, an app refreshes its token
 *   once an hour; 60 leaves room for a whole office behind one address, and stops a password
 *   or code guesser at one a second (the per-account slow-down stops it much sooner).
 * - sign-in 20 failures/min per user: the coarse guard over one account, whatever addresses try it.
 * - mcp 1200/min per token: 20 tool calls a second, every second of a minute; a model in an
 *   agent loop makes a few hundred a minute at its busiest.
 * - api 1200/min per token or browser: the web UI makes a handful of calls per page.
 */
export const DEFAULT_RATES: Readonly<Record<RateLimitName, Rate>> = {
  auth: { points: 60, windowSeconds: MINUTE },
  'sign-in': { points: 20, windowSeconds: MINUTE },
  mcp: { points: 1200, windowSeconds: MINUTE },
  api: { points: 1200, windowSeconds: MINUTE },
};

/** One step of a rate-limit setting, applied in order over the defaults. */
export type RateLimitItem =
  | { readonly all: boolean }
  | { readonly name: RateLimitName; readonly rate: Rate | 'on' | 'off' };

const UNITS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  second: 1,
  m: MINUTE,
  min: MINUTE,
  minute: MINUTE,
  h: 60 * MINUTE,
  hour: 60 * MINUTE,
};

/** Most requests a window may allow: past a million, a limit is no limit. */
const MAX_POINTS = 1_000_000;

/** How the setting is written, for messages. */
export const RATE_LIMIT_SYNTAX =
  'give on, off, or NAME=RATE pairs separated by commas, NAME one of auth, sign-in, mcp, api and RATE ' +
  'like 600/min (per s, min or h), on (the default number) or off; for example mcp=600/min,api=off';

/** Thrown for a setting that cannot be read; its message says what was wrong and how to write it. */
export class RateLimitSyntaxError extends Error {}

function parseRate(text: string, name: string): Rate | 'on' | 'off' {
  if (text === 'on' || text === 'off') return text;
  const match = /^(\d+)\/([a-z]+)$/.exec(text);
  const windowSeconds = match ? UNITS[match[2]!] : undefined;
  if (!match || windowSeconds === undefined) {
    throw new RateLimitSyntaxError(
      `${name}=${text}: a rate is a whole number per s, min or h (for example ${name}=${DEFAULT_RATES[name as RateLimitName]?.points ?? 60}/min), or on, or off.`,
    );
  }
  const points = Number(match[1]);
  if (points < 1 || points > MAX_POINTS) {
    throw new RateLimitSyntaxError(
      `${name}=${text}: give from 1 to ${MAX_POINTS.toLocaleString('en-US')} requests per window (off turns the limit off).`,
    );
  }
  return { points, windowSeconds };
}

/** Reads a setting (`on`, `off`, `mcp=600/min,api=off`, …); throws RateLimitSyntaxError. */
export function parseRateLimits(text: string): RateLimitItem[] {
  const parts = text
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new RateLimitSyntaxError(`the setting is empty: ${RATE_LIMIT_SYNTAX}.`);
  return parts.map((part): RateLimitItem => {
    if (part === 'on' || part === 'off') return { all: part === 'on' };
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    if (!(RATE_LIMIT_NAMES as readonly string[]).includes(name)) {
      throw new RateLimitSyntaxError(
        `${JSON.stringify(part)} names no limit: the limits are ${RATE_LIMIT_NAMES.join(', ')}; ${RATE_LIMIT_SYNTAX}.`,
      );
    }
    if (equals < 0) throw new RateLimitSyntaxError(`${name} needs a rate: ${name}=RATE, where ${RATE_LIMIT_SYNTAX}.`);
    return { name: name as RateLimitName, rate: parseRate(part.slice(equals + 1), name) };
  });
}

/**
 * The limits in force: the defaults for how the server authenticates (per-token limits only
 * with tokens), then each setting's items in order (the config file's, then the flag's or
 * variable's), a later item over an earlier one.
 */
export function resolveRateLimits(
  auth: 'none' | 'token' | 'oauth',
  settings: readonly (readonly RateLimitItem[])[],
): RateLimitRules {
  const withTokens = auth !== 'none';
  const rules: Record<RateLimitName, Rate | undefined> = {
    auth: DEFAULT_RATES.auth,
    'sign-in': DEFAULT_RATES['sign-in'],
    mcp: withTokens ? DEFAULT_RATES.mcp : undefined,
    api: withTokens ? DEFAULT_RATES.api : undefined,
  };
  for (const item of settings.flat()) {
    if ('all' in item) {
      for (const name of RATE_LIMIT_NAMES) rules[name] = item.all ? DEFAULT_RATES[name] : undefined;
    } else {
      rules[item.name] = item.rate === 'on' ? DEFAULT_RATES[item.name] : item.rate === 'off' ? undefined : item.rate;
    }
  }
  return rules;
}

/** A rate as people write it: `600/min`, `20/s`, `100/3600s`. */
export function formatRate(rate: Rate): string {
  const unit =
    rate.windowSeconds === 1
      ? 's'
      : rate.windowSeconds === MINUTE
        ? 'min'
        : rate.windowSeconds === 3600
          ? 'h'
          : `${rate.windowSeconds}s`;
  return `${rate.points}/${unit}`;
}
