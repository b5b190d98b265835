/**
 * Whether other work shared the machine with a benchmark run: the share of the machine's
 * CPU time spent busy over a short window while the benchmark itself runs nothing (before
 * its first section, after its last one has stopped its servers), from /proc/stat. The
 * one-minute load average could not tell: at the start it still held `npm run bench`'s
 * own build, at the end the run's own HTTP load. The look at the end can still hold the
 * run's own aftermath (PostgreSQL's background work on what it wrote), so it is reported
 * but judged by no threshold.
 */

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long each look lasts, in ms. */
export const WINDOW_MS = 2_000;

/** Busy and total jiffies of all CPUs so far, or undefined where /proc/stat cannot be read. */
function cpuTimes(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is counted in user already)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
    const busy = user + nice + system + irq + softirq + steal;
    return { busy, total: busy + idle + iowait };
  } catch {
    return undefined;
  }
}

/**
 * How long the look at the start waits before it begins, in ms: `npm run bench` builds
 * first, and the kernel was still writing the built files back (10% of the CPU busy in
 * the first 2 s, under 1% later, on an idle machine).
 */
export const SETTLE_MS = 3_000;

/**
 * The share (0–1) of the machine's CPU time spent busy during WINDOW_MS, after waiting
 * `settleMs`; undefined where it cannot be read.
 */
export async function busyShare(settleMs = 0): Promise<number | undefined> {
  await sleep(settleMs);
  const before = cpuTimes();
  await sleep(WINDOW_MS);
  const after = cpuTimes();
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}
