/** Times as people read them: "3 hours ago", a day ("Dec 6, 2026"), and the exact local time for a tooltip. */

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const exact = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
const date = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 7],
  ['week', 4.35],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

export function ago(iso: string, now = Date.now()): string {
  let amount = (new Date(iso).getTime() - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(amount) < size) return relative.format(Math.round(amount), unit);
    amount /= size;
  }
  return relative.format(Math.round(amount), 'year');
}

export function exactTime(iso: string): string {
  return exact.format(new Date(iso));
}

/** The local day of a time, as a date. */
export function day(iso: string): string {
  return date.format(new Date(iso));
}
