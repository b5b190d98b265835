// Sizes and times as the web UI shows them (web/src/lib/size.ts, time.ts).
import { describe, expect, it } from 'vitest';
import { formatSize } from '../../web/src/lib/size';
import { ago, exactTime } from '../../web/src/lib/time';

describe('formatSize', () => {
  it('counts bytes under a KB, then KB and MB of 1,024 to one decimal', () => {
    expect(formatSize(1)).toBe('1 byte');
    expect(formatSize(512)).toBe('512 bytes');
    expect(formatSize(1024)).toBe('1 KB');
    expect(formatSize(3277)).toBe(`${(3.2).toLocaleString()} KB`);
    expect(formatSize(4 * 1024 * 1024)).toBe('4 MB');
  });
});

describe('ago', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

  it('says how long ago in the largest unit that fits', () => {
    expect(ago('2026-12-06T11:59:30Z', now)).toBe(relative.format(-30, 'second'));
    expect(ago('2026-12-06T09:00:00Z', now)).toBe(relative.format(-3, 'hour'));
    expect(ago('2026-12-04T12:00:00Z', now)).toBe(relative.format(-2, 'day'));
    expect(ago('2024-12-06T12:00:00Z', now)).toBe(relative.format(-2, 'year'));
  });

  it('says a time to come too', () => {
    expect(ago('2026-12-06T12:10:00Z', now)).toBe(relative.format(10, 'minute'));
  });
});

describe('exactTime', () => {
  it('gives the full local date and time', () => {
    const iso = '2026-12-06T12:00:00Z';
    expect(exactTime(iso)).toBe(
      new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' }).format(new Date(iso)),
    );
  });
});
