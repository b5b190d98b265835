/**
 * Entry names: `<group>/<slug>`. Input is trimmed and lower-cased before anything else,
 * so `People/Allozaur` and `people/allozaur` are one entry.
 */

import { EngramError } from './errors.js';
import { groupList, type Policy } from './policy.js';

const SEGMENT = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;

export function normalizeName(raw: string): string {
  return raw.trim().toLowerCase();
}

/** True when `segment` is a valid group or slug: 1–64 of a-z 0-9 - . _, alnum at both ends. */
export function isValidSegment(segment: string): boolean {
  return SEGMENT.test(segment);
}

export function isValidName(name: string): boolean {
  const parts = name.split('/');
  return parts.length === 2 && parts.every(isValidSegment);
}

/** A readable slug suggestion for an invalid name: "John Smith!" -> "john-smith". */
function suggestSlug(raw: string): string {
  const slug = raw
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .slice(0, 64)
    .replace(/[^a-z0-9]+$/, '');
  return slug || 'example';
}

function exampleFor(raw: string, policy: Policy): string {
  const normalized = normalizeName(raw);
  const slash = normalized.indexOf('/');
  const firstGroup = Object.keys(policy.groups)[0] ?? 'topics';
  if (slash < 0) return `${firstGroup}/${suggestSlug(normalized)}`;
  const group = suggestSlug(normalized.slice(0, slash));
  const slug = suggestSlug(normalized.slice(slash + 1));
  return `${group in policy.groups ? group : firstGroup}/${slug}`;
}

/** Normalises and validates a name for reading or dropping: any well-formed group. */
export function parseName(raw: string, policy: Policy): string {
  const name = normalizeName(raw);
  if (!isValidName(name)) {
    throw new EngramError(
      'INVALID_NAME',
      `${JSON.stringify(raw)} is not a valid name: use <group>/<slug>, the slug made of a-z 0-9 - . _ ` +
        `(for example ${exampleFor(raw, policy)}). Groups you can write: ${groupList(policy)}.`,
    );
  }
  return name;
}

/** The group of a valid name. */
export function groupOf(name: string): string {
  return name.slice(0, name.indexOf('/'));
}

/** True when the configuration lets the model write the group of this valid name. */
export function isWritableName(name: string, policy: Policy): boolean {
  return Object.hasOwn(policy.groups, groupOf(name));
}

/** Like parseName, and the group must be one the configuration lets the model write. */
export function parseWritableName(raw: string, policy: Policy): string {
  const name = parseName(raw, policy);
  const group = groupOf(name);
  if (!isWritableName(name, policy)) {
    throw new EngramError(
      'READ_ONLY_GROUP',
      `${name} is in group "${group}", which cannot be written. Groups you can write: ${groupList(policy)} ` +
        `(for example ${exampleFor(raw, policy)}).`,
    );
  }
  return name;
}
