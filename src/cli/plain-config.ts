/**
 * A config file read without zod, when it is plainly valid. Loading zod took some 80 ms
 * of a cold process — the largest part of `engram stdio`'s start to its first answer
 * when a config file exists (DESIGN §7). Every field's rule is checked here as
 * config.ts's schema checks it, with the same functions for the rules of Engram's own, and
 * the data is what the schema would give (group descriptions and client ids trimmed).
 * Anything else — a field of the wrong shape, a value out of range, a name this does
 * not know — is left to the schema, which words what is wrong: this never refuses.
 * test/cli/plain-config.test.ts holds it to the schema, fuzzed: it takes the files the
 * schema takes, with the same data, so a valid file never waits for zod (but for one
 * with a key named __proto__, which zod passes over and this leaves to it).
 */

import { CLIENT_NAME_CAP, REDIRECT_URIS_CAP } from '../access/oauth/clients.js';
import { redirectUriProblem } from '../access/oauth/redirect-uris.js';
import { parseRateLimits, RateLimitSyntaxError } from '../access/rate-limits/rules.js';
import { MIN_METRICS_TOKEN_LENGTH } from '../http/metrics/access.js';
import { parsePublicUrl } from '../http/origins.js';
import { isValidSegment } from '../memory/model/names.js';
import { charLength, foldDescription } from '../memory/model/text.js';
import { normalizeUser } from '../memory/model/users.js';
import { SQLITE_DRIVER_NAMES } from '../open-store.js';
import type { ConfigData } from './config.js';
import { intervalMs } from './interval.js';
import { LOG_FORMATS } from './log-formats.js';

/** Why a "rateLimit" setting cannot be read, or undefined. */
export function rateLimitProblem(text: string): string | undefined {
  try {
    parseRateLimits(text);
    return undefined;
  } catch (error) {
    if (error instanceof RateLimitSyntaxError) return error.message;
    throw error;
  }
}

export function isPublicUrl(value: string): boolean {
  try {
    parsePublicUrl(value);
    return true;
  } catch {
    return false;
  }
}

/** A client's name as the consent page shows it: one line of 1-CLIENT_NAME_CAP characters. */
export function isClientName(name: string): boolean {
  const folded = foldDescription(name);
  return folded !== '' && charLength(folded) <= CLIENT_NAME_CAP;
}

export const METRICS_TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;
export const POSTGRES_URL = /^postgres(ql)?:\/\//;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isPositiveInteger = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;
const isNonNegativeInteger = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isBoolean = (value: unknown) => typeof value === 'boolean';
const isFilled = (value: unknown) => isString(value) && value.length > 0;
const oneOf = (names: readonly string[]) => (value: unknown) => isString(value) && names.includes(value);

/** `value` trimmed when it holds more than white space, else undefined (z.string().trim().min(1)). */
const trimmedFilled = (value: unknown): string | undefined => {
  if (!isString(value)) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
};

/** groups: at least one, each name a valid segment, each description more than white space, trimmed. */
function plainGroups(value: unknown): Record<string, string> | undefined {
  if (!isPlainObject(value) || Object.keys(value).length === 0) return undefined;
  const groups: Record<string, string> = {};
  for (const [name, description] of Object.entries(value)) {
    const trimmed = trimmedFilled(description);
    if (!isValidSegment(name) || trimmed === undefined) return undefined;
    groups[name] = trimmed;
  }
  return groups;
}

type Client = NonNullable<ConfigData['clients']>[number];

/** clients: each an object of exactly id, name and redirectUris, each id once; ids trimmed. */
function plainClients(value: unknown): Client[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const clients: Client[] = [];
  for (const client of value) {
    if (!isPlainObject(client) || !Object.keys(client).every((key) => ['id', 'name', 'redirectUris'].includes(key))) {
      return undefined;
    }
    const { id, name, redirectUris } = client;
    const trimmedId = trimmedFilled(id);
    if (trimmedId === undefined || !isString(name) || !isClientName(name)) return undefined;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.length > REDIRECT_URIS_CAP) {
      return undefined;
    }
    if (!redirectUris.every((uri) => isString(uri) && redirectUriProblem(uri) === undefined)) return undefined;
    clients.push({ id: trimmedId, name, redirectUris: [...redirectUris] });
  }
  return new Set(clients.map((client) => client.id)).size === clients.length ? clients : undefined;
}

const WEB_SOCKET_FIELDS = ['socketsPerToken', 'socketsPerUser', 'sockets', 'handshakes'];

/** webSocket: an object of some of its four fields, each a positive integer. */
function plainWebSocket(value: unknown): ConfigData['webSocket'] | undefined {
  if (!isPlainObject(value)) return undefined;
  const fields = Object.entries(value);
  if (!fields.every(([key, field]) => WEB_SOCKET_FIELDS.includes(key) && isPositiveInteger(field))) return undefined;
  return { ...value };
}

/** The fields whose data is not the value as given, each read by its own function (FIELD_READERS). */
type ReadField = 'groups' | 'clients' | 'webSocket';

/**
 * Each field taken as it is, when this is true of it. Typed by the schema's fields, so
 * that a field added to config.ts's schema fails to compile until it has a rule here
 * (or a reader), and no rule names a field the schema lacks.
 */
const FIELD_RULES: { readonly [Field in Exclude<keyof ConfigData, ReadField>]-?: (value: unknown) => boolean } = {
  entryCap: isPositiveInteger,
  userCap: isPositiveInteger,
  maxEntries: isPositiveInteger,
  historyCap: isPositiveInteger,
  descriptionCap: isPositiveInteger,
  maxNames: isPositiveInteger,
  trashRetentionDays: isNonNegativeInteger,
  historyLimit: isPositiveInteger,
  proposalRetentionDays: isPositiveInteger,
  maxProposals: isPositiveInteger,
  groupCommit: isBoolean,
  sqliteDriver: oneOf(SQLITE_DRIVER_NAMES),
  db: isFilled,
  databaseUrl: (value) => isString(value) && POSTGRES_URL.test(value),
  poolSize: isPositiveInteger,
  statementTimeoutMs: isNonNegativeInteger,
  user: (value) => isString(value) && normalizeUser(value) !== undefined,
  publicUrl: (value) => isString(value) && isPublicUrl(value),
  allowPrivateClientMetadata: isBoolean,
  rateLimit: (value) => isString(value) && rateLimitProblem(value) === undefined,
  metrics: isBoolean,
  logFormat: oneOf(LOG_FORMATS),
  metricsToken: (value) =>
    isString(value) && value.length >= MIN_METRICS_TOKEN_LENGTH && METRICS_TOKEN_CHARACTERS.test(value),
  backupDir: isFilled,
  backupEvery: (value) => isString(value) && intervalMs(value) !== undefined,
  backupKeep: isPositiveInteger,
};

/** Fields whose data is not the value as given (trimmed, copied): each read by its own function. */
const FIELD_READERS: { readonly [Field in ReadField]: (value: unknown) => ConfigData[Field] | undefined } = {
  groups: plainGroups,
  clients: plainClients,
  webSocket: plainWebSocket,
};

/**
 * The data config.ts's schema gives for `json`, when `json` is plainly valid; undefined
 * when the schema must decide (and, if it refuses, say why).
 */
export function plainConfig(json: unknown): ConfigData | undefined {
  if (!isPlainObject(json)) return undefined;
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const read = Object.hasOwn(FIELD_READERS, key) ? FIELD_READERS[key as ReadField] : undefined;
    if (read !== undefined) {
      const field = read(value);
      if (field === undefined) return undefined;
      data[key] = field;
      continue;
    }
    const rule = Object.hasOwn(FIELD_RULES, key) ? FIELD_RULES[key as keyof typeof FIELD_RULES] : undefined;
    if (rule === undefined || !rule(value)) return undefined;
    data[key] = value;
  }
  return data as ConfigData;
}
