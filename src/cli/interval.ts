/**
 * A time between two runs as a person writes it, "30m", "6h", "1d" (the flags and config
 * keys of scheduled backups), in ms.
 */

export const INTERVAL_UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The longest interval: a timer of Node's waits at most 2^31-1 ms (24.8 days), and one set
 * longer fires at once, so a longer schedule would back up without pause.
 */
export const MAX_INTERVAL_DAYS = 24;

/** How an interval is written, for messages. */
export const INTERVAL_SYNTAX = `a number and a unit, from 1s to ${MAX_INTERVAL_DAYS}d: 30m, 6h, 1d (s, m, h or d)`;

/** "90s", "30m", "6h", "1d" in ms; undefined when the text is none of these, under a second or over MAX_INTERVAL_DAYS. */
export function intervalMs(text: string): number | undefined {
  const match = /^(\d+)\s*([smhd])$/.exec(text.trim());
  if (match === null) return undefined;
  const ms = Number(match[1]) * (INTERVAL_UNITS[match[2] as string] as number);
  return ms >= 1000 && ms <= MAX_INTERVAL_DAYS * (INTERVAL_UNITS.d as number) ? ms : undefined;
}

/** An interval in ms as the largest unit that divides it: 21600000 -> "6h". */
export function describeInterval(ms: number): string {
  for (const [unit, size] of Object.entries(INTERVAL_UNITS).reverse()) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms} ms`;
}
