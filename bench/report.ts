/**
 * What a benchmark hands back — tables, the DESIGN §7 targets it checks, a short
 * reading — and how the whole run becomes docs/benchmarks.md and the console table.
 */

import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { WINDOW_MS } from './other-work.js';

export interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface Target {
  readonly what: string;
  readonly target: string;
  readonly measured: string;
  /** undefined when the figure could not be measured in this run. */
  readonly met: boolean | undefined;
}

export interface Section {
  readonly title: string;
  /** What was measured and how, in a few sentences. */
  readonly method: string;
  readonly tables: readonly Table[];
  readonly targets: readonly Target[];
  /** The figures in words. */
  readonly reading: readonly string[];
}

/** A target that a ratio be at most `limit`: met, missed, or not measured when the ratio is not a number. */
export function ratioAtMost(what: string, ratio: number, limit: number, format: (ratio: number) => string): Target {
  return {
    what,
    target: `≤ ${format(limit)}`,
    measured: format(ratio),
    met: Number.isFinite(ratio) ? ratio <= limit : undefined,
  };
}

export function markdownTable(table: Table): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const align = table.header.map((_, column) => (column === 0 ? '---' : '---:'));
  return [`**${table.title}**`, '', line(table.header), line(align), ...table.rows.map(line)].join('\n');
}

export function machineDescription(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return [
    `- CPU: ${cpu}, ${availableParallelism()} cores available (\`nproc\`)`,
    `- Memory: ${Math.round(totalmem() / 2 ** 30)} GiB; OS: Linux ${release()}`,
    `- Node ${process.version}; databases and files in ${tmpdir()} (the same disk for every figure)`,
  ].join('\n');
}

function verdict(target: Target): string {
  if (target.met === undefined) return 'not measured';
  return target.met ? 'met' : '**missed**';
}

export function renderSection(section: Section): string {
  const parts = [`## ${section.title}`, section.method, ...section.tables.map(markdownTable)];
  if (section.targets.length > 0) {
    parts.push(
      markdownTable({
        title: 'Targets (DESIGN §7)',
        header: ['figure', 'target', 'measured', 'verdict'],
        rows: section.targets.map((target) => [target.what, target.target, target.measured, verdict(target)]),
      }),
    );
  }
  if (section.reading.length > 0) parts.push(section.reading.map((sentence) => `- ${sentence}`).join('\n'));
  return parts.join('\n\n');
}

export interface RunFacts {
  readonly command: string;
  readonly startedAt: Date;
  readonly seconds: number;
  /**
   * The share of the machine's CPU busy while the benchmark ran nothing, just before its
   * first section and just after its last (other-work.ts); undefined where it cannot be read.
   */
  readonly otherWork: readonly [number | undefined, number | undefined];
}

/** Other work at or above this share of the machine's CPU just before the first figure makes the figures noisier. */
const BUSY_SHARE = 0.1;

export function renderDocument(sections: readonly Section[], run: RunFacts): string {
  const percent = (share: number | undefined) => (share === undefined ? 'unknown' : `${Math.round(share * 100)}%`);
  const [atStart, atEnd] = run.otherWork;
  const otherWork =
    `other work on the machine (its CPU busy while the benchmark ran nothing, over ${WINDOW_MS / 1000} s, from ` +
    `/proc/stat): ${percent(atStart)} just before the first figure; ${percent(atEnd)} just after the last, which ` +
    'may still hold the run’s own aftermath (PostgreSQL’s background work on what it wrote)';
  const shared =
    (atStart ?? 0) >= BUSY_SHARE
      ? '\n- **The machine was busy with other work when this run began**: every figure is noisier than on a ' +
        'quiet machine, the ratios between neighbours (measured side by side) less so than the absolute times.'
      : '';
  return [
    '# Benchmarks',
    'Every figure below comes from one run of the command shown, on the machine described; ' +
      'each comparison is between things measured side by side in that run (interleaved call by call), ' +
      'never against numbers from elsewhere. Latencies are medians unless marked p99. ' +
      'This file is written by the benchmark itself: rerun it rather than edit it.',
    `## Machine and command\n\n${machineDescription()}\n- Run: ${run.startedAt.toISOString()}, took ${Math.round(run.seconds)} s; ${otherWork}${shared}\n\n\`\`\`\n${run.command}\n\`\`\``,
    ...sections.map(renderSection),
  ]
    .join('\n\n')
    .concat('\n');
}
