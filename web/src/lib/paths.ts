/**
 * Every path the UI builds from an entry name or other data (an API call, a link), one
 * encoded segment per piece: a name read from the address bar (`/entries/..%2F..%2Fapi…`)
 * or from memory must never steer a call to another route. `/`, `?`, `#` and `%` are
 * encoded; `.` and `..` cannot be (a URL resolves them, `%2e` too), so a segment that is
 * one of them, or empty, is refused: no entry, token or app has such a name.
 */

/** `value` as one path segment; throws for '', '.' and '..', which no encoding keeps in place. */
export function pathSegment(value: string): string {
  if (value === '' || value === '.' || value === '..') {
    throw new Error(`${JSON.stringify(value)} cannot be part of an address: it is not the name of anything here.`);
  }
  return encodeURIComponent(value);
}

/**
 * `{group}/{slug}` of an entry name, each encoded: the group is what comes before the first
 * `/`, the slug all the rest (a `/` in it stays inside the segment, as %2F). Throws for a
 * name that is not `group/slug`.
 */
export function namePath(name: string): string {
  const slash = name.indexOf('/');
  if (slash === -1) {
    throw new Error(`${JSON.stringify(name)} is not an entry name: a name is <group>/<slug>, like people/ada.`);
  }
  return `${pathSegment(name.slice(0, slash))}/${pathSegment(name.slice(slash + 1))}`;
}
