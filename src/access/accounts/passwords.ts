/**
 * Passwords (DESIGN §8): what a password must be, and how it is kept. Only an scrypt hash
 * is stored, with a random salt of its own and the parameters it was made with written
 * into it, so that stronger parameters later do not break the hashes kept today. Hashing
 * runs on libuv's thread pool (async scrypt), never on the event loop, and a check
 * compares in constant time. The password is NFC-normalised first: the same password
 * typed on two keyboards that compose accents differently is the same password.
 */

import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { EngramError } from '../../memory/model/errors.js';
import { charLength } from '../../memory/model/text.js';

export const MIN_PASSWORD_LENGTH = 10;
/** Longer passwords are refused, so that hashing one stays bounded in cost. */
export const MAX_PASSWORD_LENGTH = 1024;

/** The parameters new hashes are made with: 32 MiB and about 0.1 s of one core. */
const COST = { N: 32_768, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** The most a recorded hash may ask of a check (N up to 2^20, 128 MiB at most), whatever it says. */
const MAX_N = 2 ** 20;
const MAX_MEMORY = 128 * 1024 * 1024;

const ENCODED = /^scrypt\$N=(\d{1,8}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** Refuses a password that is too short, too long or not one line of text (INVALID_ARGUMENT); never repeats it. */
export function checkPasswordRules(password: string): void {
  const length = charLength(password);
  if (length < MIN_PASSWORD_LENGTH) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the password must be at least ${MIN_PASSWORD_LENGTH} characters long; this one has ${length}. ` +
        'A few words strung together make a long password that is easy to remember.',
    );
  }
  if (length > MAX_PASSWORD_LENGTH) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the password must be at most ${MAX_PASSWORD_LENGTH} characters long; this one has ${length}.`,
    );
  }
  if (/\p{Cc}/u.test(password)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the password must be one line without control characters: the password field of a sign-in page cannot send them.',
    );
  }
}

/**
 * The encoded hash of `password`: `scrypt$N=32768,r=8,p=1$<salt, base64>$<hash, base64>`.
 * `cost` is a test seam (AccountsOptions.passwordCost, which no front door sets): every
 * hash Engram makes uses the parameters above.
 */
export async function hashPassword(password: string, cost: PasswordCost = COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, cost);
  return `scrypt$N=${cost.N},r=${cost.r},p=${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Whether `password` is the one `encoded` was made from, recomputed with the parameters
 * recorded in it. False for an encoding that is malformed or asks for more than a check
 * may spend, and for a password longer than any that can be set.
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parseEncoded(encoded);
  if (!parsed || charLength(password) > MAX_PASSWORD_LENGTH) return false;
  const key = await derive(password, parsed.salt, parsed.key.length, parsed.cost);
  return timingSafeEqual(key, parsed.key);
}

/** scrypt's parameters: CPU and memory cost, block size, parallelism. */
export interface PasswordCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

function parseEncoded(encoded: string): { cost: PasswordCost; salt: Buffer; key: Buffer } | undefined {
  const match = ENCODED.exec(encoded);
  if (!match) return undefined;
  const [N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const salt = Buffer.from(match[4]!, 'base64');
  const key = Buffer.from(match[5]!, 'base64');
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || r < 1 || p < 1 || memoryOf({ N, r, p }) > MAX_MEMORY) return undefined;
  if (salt.length < 8 || key.length < 16 || key.length > 64) return undefined;
  return { cost: { N, r, p }, salt, key };
}

/** What scrypt allocates for these parameters, in bytes. */
function memoryOf(cost: PasswordCost): number {
  return 128 * cost.N * cost.r * cost.p;
}

function derive(password: string, salt: Buffer, length: number, cost: PasswordCost): Promise<Buffer> {
  // Node refuses to allocate past maxmem (32 MiB by default, exactly what N=32768, r=8 needs): leave room.
  const options: ScryptOptions = { ...cost, maxmem: 2 * memoryOf(cost) };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}
