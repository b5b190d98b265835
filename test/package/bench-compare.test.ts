/**
 * `npm run bench:compare` reads two runs of the benchmark's markdown and judges every
 * time and rate: rows matched by their label cells (a figure such as an index size that
 * differs between the runs does not split a row), times lower-is-better, calls/s
 * higher-is-better, within-run ratios shown and never judged, rounds averaged.
 */

import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without declarations
import { compare, figures, readCell } from '../../scripts/bench-compare.mjs';

const run = (append: string, size: string, rate: string) => `## In-process

**Durable writes (median / p99)**

| entries | operation | append | index size | append / floor |
| --- | --- | ---: | ---: | ---: |
| 1,000 | write | ${append} / 3.70 ms | ${size} | 1.76x |

**Throughput**

| connections | workload | calls/s | mean latency |
| --- | --- | ---: | ---: |
| 64 | SQLite reads | ${rate} | 14.5 ms |

**Targets (DESIGN §7)**

| figure | target | measured | verdict |
| --- | ---: | ---: | ---: |
| durable write | ≤ 1.2x | 1.76x | **missed** |
`;

it('reads times in every unit, rates only in a calls/s column, and ratios, shares and sizes as unjudged', () => {
  expect(readCell('372 µs / 3.70 ms', 'append', '')).toEqual({ kind: 'time', value: 372e-6 });
  expect(readCell('1.2 s', 'x', '')).toEqual({ kind: 'time', value: 1.2 });
  expect(readCell('154 ms (39 calls)', 'x', '')).toEqual({ kind: 'time', value: 0.154 });
  expect(readCell('4,422', 'calls/s', '')).toEqual({ kind: 'rate', value: 4422 });
  expect(readCell('2,649 (438–5,257)', 'fast path on', 'Workloads, calls/s')).toEqual({ kind: 'rate', value: 2649 });
  expect(readCell('1,000', 'entries', '')).toBeUndefined();
  expect(readCell('1.76x', 'append / floor', '')?.kind).toBe('ratio');
  expect(readCell('49%', 'share', '')?.kind).toBe('ratio');
  expect(readCell('97 KiB', 'index size', '')?.kind).toBe('ratio');
  expect(readCell('open', 'operation', '')).toBeUndefined();
});

it('keys each figure by section, table, the row’s label cells and column, leaving the targets out', () => {
  const keys = [...figures(run('372 µs', '97 KiB', '4,422')).keys()];
  expect(keys).toContain('In-process ¦ Durable writes (median / p99) ¦ 1,000 · write ¦ append');
  expect(keys).toContain('In-process ¦ Throughput ¦ 64 · SQLite reads ¦ calls/s');
  expect(keys.some((key) => key.includes('Targets'))).toBe(false);
});

it('judges a slower time or a lower rate past 5% worse, within 5% the same, and never judges a ratio', () => {
  const rows = compare([run('300 µs', '97 KiB', '4,000')], [run('330 µs', '98 KiB', '3,900')]);
  const verdict = (column: string) => rows.find((row: { column: string }) => row.column === column)?.verdict;
  expect(verdict('append')).toBe('worse');
  expect(verdict('calls/s')).toBe('same');
  expect(verdict('mean latency')).toBe('same');
  expect(verdict('append / floor')).toBe('');
  expect(verdict('index size')).toBe('');
  const faster = compare([run('300 µs', '97 KiB', '4,000')], [run('200 µs', '97 KiB', '5,000')]);
  expect(faster.filter((row: { verdict: string }) => row.verdict === 'better')).toHaveLength(2);
});

it('averages the rounds of each build geometrically', () => {
  const rows = compare(
    [run('100 µs', '97 KiB', '4,000'), run('400 µs', '97 KiB', '4,000')],
    [run('200 µs', '97 KiB', '4,000')],
  );
  const append = rows.find((row: { column: string }) => row.column === 'append');
  expect(append.change).toBeCloseTo(1);
  expect(append.before).toEqual(['100 µs / 3.70 ms', '400 µs / 3.70 ms']);
});
