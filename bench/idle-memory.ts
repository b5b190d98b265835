/**
 * Idle memory (DESIGN §7: `engram stdio`'s idle memory within 1.2x the official memory
 * server's): each server is started over stdio by the same SDK v1 client (mcp-client.ts),
 * on the same memory, in its own format (server-memory's JSONL file; Engram's SQLite file,
 * seeded by `engram import`); the client opens the connection, lists the tools and opens one
 * entry, then leaves the server idle for IDLE_MS (Engram loads its MCP SDK and proves its
 * fast path in that time, as after any client's opening), and the server's memory is read
 * from /proc: its resident set (what a task manager shows) and, of that, what is its own
 * (anonymous: heap, code, stacks) rather than pages of files it maps (SQLite maps its
 * database file; the kernel can drop those pages at will). Start by start, each first in turn.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerGraphFile, subjectName, subjects } from './content.js';
import { ENGRAM_CLI, engramFiles, engramFlags, seedEngram } from './engram.js';
import { connect, type Session } from './mcp-client.js';
import { MEMORY_SCRIPT, MEMORY_VERSION } from './peers.js';
import { ratioAtMost, type Section } from './report.js';
import { formatRatio, summarize } from './stats.js';

export interface IdleMemoryOptions {
  readonly entries: number;
  readonly rounds: number;
}

export const DEFAULT_IDLE_MEMORY: IdleMemoryOptions = { entries: 1_000, rounds: 8 };
export const QUICK_IDLE_MEMORY: IdleMemoryOptions = { entries: 50, rounds: 2 };

const TARGET_RATIO = 1.2;
/** How long each server is left idle after the opening before its memory is read. */
const IDLE_MS = 12_000;

interface Footprint {
  /** VmRSS, in bytes. */
  readonly resident: number;
  /** RssAnon, in bytes. */
  readonly own: number;
}

/** A process's resident memory, from /proc/<pid>/status (Linux). */
function footprintOf(pid: number): Footprint {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]) * 1024;
  };
  return { resident: kib('VmRSS'), own: kib('RssAnon') };
}

/** Starts a server, plays the opening and one open, waits idle, reads its memory, stops it. */
async function idleFootprint(start: () => Promise<Session>, open: (session: Session) => Promise<unknown>) {
  const session = await start();
  try {
    if (session.pid === undefined) throw new Error('the server has no process id');
    await session.listTools();
    await open(session);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return footprintOf(session.pid);
  } finally {
    await session.close();
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export async function benchIdleMemory(options: IdleMemoryOptions = DEFAULT_IDLE_MEMORY): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-idle-'));
  try {
    const list = subjects(0, options.entries);
    const files = engramFiles(folder);
    seedEngram(files, list);
    const graph = join(folder, 'memory.jsonl');
    writeFileSync(graph, peerGraphFile(list));
    const name = subjectName(0);
    const engram = (args: string[]) => () =>
      idleFootprint(
        () => connect(process.execPath, [ENGRAM_CLI, 'stdio', ...args], files.env),
        (session) => session.call('memory_open', { names: [name] }),
      );
    const sides = {
      // As most people run it: no config file (the caps' defaults hold these entries).
      engram: engram(['--db', files.db]),
      configured: engram(engramFlags(files)),
      official: () =>
        idleFootprint(
          () => connect(process.execPath, [MEMORY_SCRIPT], { ...process.env, MEMORY_FILE_PATH: graph }),
          (session) => session.call('open_nodes', { names: [name] }),
        ),
    };
    const order = Object.keys(sides) as (keyof typeof sides)[];
    const samples: Record<keyof typeof sides, Footprint[]> = { engram: [], configured: [], official: [] };
    for (let round = 0; round < options.rounds; round++) {
      // Each first in turn, so that none always follows the same one.
      const offset = round % order.length;
      for (const side of [...order.slice(offset), ...order.slice(0, offset)]) samples[side].push(await sides[side]());
    }
    const median = (side: keyof typeof sides, field: keyof Footprint) =>
      summarize(samples[side].map((sample) => sample[field])).median;
    // Held to the target with a config file and without: the larger of the two.
    const ratio =
      Math.max(median('engram', 'resident'), median('configured', 'resident')) / median('official', 'resident');
    const row = (label: string, side: keyof typeof sides) => [
      label,
      mib(median(side, 'resident')),
      formatRatio(median(side, 'resident') / median('official', 'resident')),
      mib(median(side, 'own')),
      formatRatio(median(side, 'own') / median('official', 'own')),
    ];
    return {
      title: 'Idle memory: engram stdio beside the official memory server',
      method:
        'Each server is started over stdio by the same MCP SDK v1 client, on the same ' +
        `${options.entries.toLocaleString('en-US')} entries in its own format (the official server's JSONL file; ` +
        "Engram's SQLite file, seeded by `engram import`); the client opens the connection, lists the tools and " +
        `opens one entry, leaves the server idle for ${IDLE_MS / 1000} s (Engram loads its MCP SDK and proves its ` +
        'fast path in that time, as after any opening), then reads its memory from /proc/<pid>/status: the resident ' +
        'set (VmRSS, what a task manager shows) and, of it, the anonymous part (RssAnon: heap, code, stacks), ' +
        'without pages of files the process maps (SQLite maps its database file; the kernel may drop those). ' +
        'Engram runs as most people run it, with no config file, and with one (a config file naming settings, as ' +
        `every other benchmark's Engram has). Median of ${options.rounds} starts of each, each first in turn.`,
      tables: [
        {
          title: 'Memory after the opening, idle',
          header: ['server', 'resident (VmRSS)', 'against the official', 'anonymous (RssAnon)', 'against the official'],
          rows: [
            row('`engram stdio`', 'engram'),
            row('`engram stdio` with a config file', 'configured'),
            row(`\`@modelcontextprotocol/server-memory@${MEMORY_VERSION}\``, 'official'),
          ],
        },
      ],
      targets: [
        ratioAtMost(
          '`engram stdio` idle memory (resident; with a config file or without, the larger), against the official memory server',
          ratio,
          TARGET_RATIO,
          formatRatio,
        ),
      ],
      reading: [],
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
