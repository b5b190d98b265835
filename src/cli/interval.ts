/**
 * A time between two runs as a person writes it, "30m", "6h", "1d" (the flags and config
 * keys of scheduled backups), in ms.
 */

export const INTERVAL_UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "6h", "1d" in ms; undefined when the text is none of these, or under a second. */
export function intervalMs(text: string): number | undefined {
  const match = /^(\d+)\s*([smhd])$/.exec(text.trim());
  if (match === null) return undefined;
  const ms = Number(match[1]) * (INTERVAL_UNITS[match[2] as string] as number);
  return ms >= 1000 ? ms : undefined;
}

/** An interval in ms as the largest unit that divides it: 21600000 -> "6h". */
export function describeInterval(ms: number): string {
  for (const [unit, size] of Object.entries(INTERVAL_UNITS).reverse()) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms} ms`;
}
