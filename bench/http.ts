/**
 * HTTP: tool calls per second and latency at 1, 8 and 64 connections against `engram
 * serve` (SQLite, and PostgreSQL when a server is there): reads (memory_open of one
 * entry) and durable writes (append), beside a bare node:http server answering a fixed
 * body, byte for byte a read's answer — the ceiling for any server on this machine,
 * measured at every N and shown beside every figure — the MCP floor (floor-server.ts), the
 * least any SQLite-backed MCP server does per call, and the serial rate of raw durable
 * commits, the limit for writes without group commit; and the writes of many users
 * (many-users.ts), each connection a user of its own with a token, the workload a team
 * server is judged by. Beside every Engram row, the same workload on the SDK peer
 * (sdk-peer.ts): Engram's tools, handler and store served the common way, the MCP SDK's
 * stateless Streamable HTTP with a server per request, which Engram must beat on every
 * row. The load comes from a generator process of its own (load.ts), driven the same way
 * for every row.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { appendedLine, bodyOf, subject, subjects } from './content.js';
import { ENGRAM_CLI, type EngramFiles, engramFiles, engramFlags, seedEngram, TOKEN_AUTH_FLAGS } from './engram.js';
import { GENERATOR_WORKERS, type LoadResult, type LoadTarget, postOnce, runLoad } from './load.js';
import { floorToken, seedUsers, USER_ENTRIES, userWrite } from './many-users.js';
import { createBenchDatabase, findBenchPostgres, serialPostgresCommitRate } from './postgres.js';
import type { Section, Table, Target } from './report.js';
import { formatInteger, formatMs, formatRatio, roundRatios, type Spread, spread } from './stats.js';

export interface HttpOptions {
  readonly connections: readonly number[];
  readonly entries: number;
  /**
   * Rounds at each N: each measures every row once, in turn, and a row's figures are the
   * medians of its rounds, its ratios to its neighbours the medians of theirs round by round.
   */
  readonly rounds: number;
  /** How long each row is counted in a round (whole seconds, load.ts says why). */
  readonly durationMs: number;
  /** How long each row runs uncounted before its first round. */
  readonly warmupMs: number;
  /** How long each serial commit rate is measured. */
  readonly serialMs: number;
  /**
   * Only the rows whose workload matches (run.ts `--rows`), for developing the benchmark;
   * the ceiling is measured at every N whatever it says.
   */
  readonly rows?: RegExp | undefined;
}

export const DEFAULT_HTTP: HttpOptions = {
  connections: [1, 8, 64],
  // 500 to read, 500 to write at each N.
  entries: 2_000,
  rounds: 5,
  durationMs: 1_000,
  warmupMs: 1_000,
  serialMs: 3_000,
};

/** `npm run bench -- --quick`: the same rows, briefly, for developing the benchmark. */
export const QUICK_HTTP: HttpOptions = {
  connections: [1, 64],
  // 150 entries to write at each N: with 75 (200 entries), quick rounds grew some past the entry cap (16 KiB).
  entries: 400,
  rounds: 2,
  durationMs: 1_000,
  warmupMs: 1_000,
  serialMs: 500,
};

const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const FLOOR_SERVER = fileURLToPath(new URL('./floor-server.js', import.meta.url));
const SDK_PEER_SERVER = fileURLToPath(new URL('./sdk-peer-server.js', import.meta.url));

/** Starts a server process and waits for the line on its stdout that says where it listens. */
export function startServer(
  args: string[],
  env: NodeJS.ProcessEnv,
  portPattern: RegExp,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = portPattern.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.resume();
        resolve({ child, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${output}`)));
  });
}

export function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export const MCP_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-06-18',
};

export function toolCall(serial: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: serial, method: 'tools/call', params: { name, arguments: args } });
}

/** What every successful tool answer contains. */
export const TOOL_SUCCESS = '"isError":false';

export function checkToolAnswer(status: number, text: string): void {
  if (status !== 200 || !text.includes(TOOL_SUCCESS)) {
    throw new Error(`engram serve refused a call during the benchmark (HTTP ${status}): ${text.slice(0, 300)}`);
  }
}

/** Serial raw durable commits per second: one distinct 1 KiB row per transaction, WAL, synchronous=FULL. */
function serialCommitRate(folder: string, durationMs: number): number {
  const db = new Database(join(folder, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT');
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    const body = bodyOf(subject(0));
    const end = performance.now() + durationMs;
    let commits = 0;
    while (performance.now() < end) {
      insert.run(`${commits} ${body}`);
      commits++;
    }
    return commits / (durationMs / 1000);
  } finally {
    db.close();
  }
}

interface Backend {
  readonly label: 'SQLite' | 'SQLite without group commit' | 'PostgreSQL';
  readonly port: number;
  /** Raw durable commits per second, one after another: the rate without group commit. */
  readonly serialRate: number;
}

/** A server with token auth, on a database of its own, holding one user per connection. */
interface Team {
  readonly label: 'SQLite' | 'PostgreSQL';
  readonly port: number;
  readonly tokens: readonly string[];
  readonly serialRate: number;
}

/** Where many users' writes go: a server holding the users, and their tokens, one per user. */
interface Users {
  readonly port: number;
  readonly tokens: readonly string[];
}

/**
 * What Engram's rows are compared with on one backend — the MCP floor (floor-server.ts) or
 * the SDK peer (sdk-peer-server.ts) — holding the same entries and users as Engram's servers.
 */
interface Neighbour {
  readonly label: 'SQLite' | 'PostgreSQL';
  /** Where reads and one user's writes go. */
  readonly port: number;
  readonly users: Users;
}

/** The workload of many users writing at once. */
const MANY_USERS = 'durable writes, many users';

/** The bare ceiling's row. */
const CEILING = 'bare node:http (ceiling)';

/** Engram on SQLite with every write in its own commit: what group commit brings. */
const SOLO = 'SQLite without group commit';

/** One row at an N as a round measures it, and the rows its ratios are taken over. */
interface Slot {
  readonly workload: string;
  readonly target: LoadTarget;
  /** Engram's rows, and the floor on Engram's schema: the MCP floor's row of the same workload on the same backend. */
  readonly floor?: string | undefined;
  /** Engram's rows: the SDK peer's row of the same workload on the same backend. */
  readonly peer?: string | undefined;
  /** Engram's writes: the serial commit rate of its backend. */
  readonly serialRate?: number | undefined;
}

interface Row {
  readonly connections: number;
  readonly workload: string;
  /** The median rate and p99 of its rounds. */
  readonly result: LoadResult;
  /** Its rate over the bare node:http ceiling's at the same N, round by round. */
  readonly ofCeiling: Spread;
  /** Writes: the multiple of the serial commit rate. */
  readonly serial?: string | undefined;
  /**
   * Engram's reads and writes, and the floor on Engram's schema: their rate over the MCP
   * floor's for the same workload at the same N, round by round.
   */
  readonly ofFloor?: Spread | undefined;
  /** Engram's reads and writes: their rate over the SDK peer's for the same workload at the same N, round by round. */
  readonly ofPeer?: Spread | undefined;
}

/** A row's result over its rounds: the median rate (mean latency from it, a closed loop) and the median p99. */
function medianResult(results: readonly LoadResult[], connections: number): LoadResult {
  const perSecond = spread(results.map((result) => result.perSecond)).median;
  return { perSecond, mean: (connections / perSecond) * 1000, p99: spread(results.map((result) => result.p99)).median };
}

const FLOOR = 'MCP floor';
/** The MCP floor's server on Engram's SQLite schema and statements (floor-engram-schema.ts). */
const SCHEMA_FLOOR = `${FLOOR} on Engram’s SQLite schema`;
const SDK_PEER = 'SDK peer';

/** How the floor on a backend is named in the rows. */
function floorName(label: Neighbour['label']): string {
  return `${FLOOR} on ${label}`;
}

/** How the SDK peer on a backend is named in the rows. */
function peerName(label: Neighbour['label']): string {
  return `${SDK_PEER} on ${label}`;
}

export async function benchHttp(options: HttpOptions = DEFAULT_HTTP): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-http-'));
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const start = async (files: EngramFiles, flags: readonly string[] = []) => {
    if (flags.length === 0) seedEngram(files, subjects(0, options.entries));
    const server = await startServer(
      [ENGRAM_CLI, 'serve', '--port', '0', ...engramFlags(files), ...flags],
      files.env,
      /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/,
    );
    children.push(server.child);
    return server.port;
  };
  try {
    const backends: Backend[] = [
      {
        label: 'SQLite',
        port: await start(engramFiles(folder)),
        serialRate: serialCommitRate(folder, options.serialMs),
      },
    ];
    // The same server with every write in its own commit: what group commit brings.
    backends.push({
      label: SOLO,
      port: await start(engramFiles(mkdtempSync(join(folder, 'solo-')), undefined, { groupCommit: false })),
      serialRate: backends[0]!.serialRate,
    });
    const postgres = await findBenchPostgres();
    if (postgres) {
      const database = await createBenchDatabase(postgres);
      cleanups.push(database.drop);
      backends.push({
        label: 'PostgreSQL',
        port: await start(engramFiles(mkdtempSync(join(folder, 'pg-')), database.url)),
        serialRate: await serialPostgresCommitRate(database.url, bodyOf(subject(0)), options.serialMs),
      });
    }
    // Many users: a server with token auth on a database of its own per backend, one user per connection.
    const users = Math.max(...options.connections);
    const teams: Team[] = [];
    for (const backend of backends) {
      if (backend.label === SOLO) continue;
      let url: string | undefined;
      if (backend.label === 'PostgreSQL') {
        const database = await createBenchDatabase(postgres!);
        cleanups.push(database.drop);
        url = database.url;
      }
      const files = engramFiles(mkdtempSync(join(folder, 'team-')), url);
      const tokens = await seedUsers(files, users);
      const port = await start(files, TOKEN_AUTH_FLAGS);
      teams.push({ label: backend.label, port, tokens, serialRate: backend.serialRate });
    }
    // Reads open entries of the first quarter, writes append to the rest: an entry a write
    // grew would make the reads after it answer more than the ceiling's fixed body. The
    // writes at each N go to entries of their own (a part of the rest per N), so that every
    // server's rows at an N find those entries as seeded: sharing them, a server whose rows
    // at the smaller N had written more met longer entries at 64 (more to store and index).
    const readEntries = Math.floor(options.entries / 4);
    const writeEntries = Math.floor((options.entries - readEntries) / options.connections.length);
    const readPick = (serial: number) => subject((serial * 7919) % readEntries).name;
    const writePick = (serial: number, connections: number) =>
      subject(readEntries + options.connections.indexOf(connections) * writeEntries + ((serial * 7919) % writeEntries))
        .name;
    const serials = Array.from({ length: REQUEST_KINDS }, (_, serial) => serial);
    const reads = (port: number, label: string): LoadTarget => ({
      label,
      port,
      path: '/mcp',
      headers: MCP_HEADERS,
      bodies: serials.map((serial) => toolCall(serial, 'memory_open', { names: [readPick(serial)] })),
      expect: TOOL_SUCCESS,
    });
    // Every connection sends these in turn; an entry may receive the same line more than once, a distinct commit each time.
    const writes = (port: number, label: string, connections: number): LoadTarget => ({
      ...reads(port, label),
      bodies: serials.map((serial) =>
        toolCall(serial, 'memory_write', { name: writePick(serial, connections), new: appendedLine(serial) }),
      ),
    });
    const manyUsers = (team: Users, connections: number, label: string): LoadTarget => ({
      ...reads(team.port, `${label} ${MANY_USERS}`),
      bodies: serials.map((serial) => toolCall(serial, 'memory_write', userWrite(serial))),
      tokens: team.tokens.slice(0, connections),
    });
    // The ceiling answers, byte for byte, what engram serve answers to a read.
    const sample = await postOnce(reads(backends[0]!.port, 'a sample read'), reads(0, '').bodies[0]!);
    checkToolAnswer(sample.status, sample.text);
    const bare = await startServer([BARE_SERVER, sample.text], process.env, /listening (\d+)/);
    children.push(bare.child);
    const ceilingTarget: LoadTarget = { ...reads(bare.port, 'the bare ceiling'), expect: '' };
    // The floor of each backend, holding the same entries and users as Engram's servers do.
    const floors: Neighbour[] = [];
    const startFloor = async (label: Neighbour['label'], database: string[]) => {
      const floor = await startServer(
        [FLOOR_SERVER, ...database, String(options.entries), String(users)],
        process.env,
        /listening (\d+)/,
      );
      children.push(floor.child);
      const tokens = Array.from({ length: users }, (_, at) => floorToken(at));
      floors.push({ label, port: floor.port, users: { port: floor.port, tokens } });
    };
    await startFloor('SQLite', ['sqlite', join(folder, 'floor.db')]);
    // The same floor on Engram's own schema and statements: what that schema costs these calls.
    const schemaFloor = await startServer(
      [FLOOR_SERVER, 'sqlite-schema', join(folder, 'schema-floor.db'), String(options.entries), String(users)],
      process.env,
      /listening (\d+)/,
    );
    children.push(schemaFloor.child);
    const onSchema: Neighbour = {
      label: 'SQLite',
      port: schemaFloor.port,
      users: { port: schemaFloor.port, tokens: floors[0]!.users.tokens },
    };
    if (postgres) {
      const database = await createBenchDatabase(postgres);
      cleanups.push(database.drop);
      await startFloor('PostgreSQL', ['postgres', database.url]);
    }
    // The SDK peer of each backend, in two servers on databases seeded as Engram's two are:
    // the entries by `engram import` in one, the users and their tokens in the other.
    const peers: Neighbour[] = [];
    const startPeer = async (files: EngramFiles) => {
      const location = files.databaseUrl === undefined ? ['sqlite', files.db] : ['postgres', files.databaseUrl];
      const peer = await startServer([SDK_PEER_SERVER, ...location], process.env, /listening (\d+)/);
      children.push(peer.child);
      return peer.port;
    };
    for (const label of postgres ? (['SQLite', 'PostgreSQL'] as const) : (['SQLite'] as const)) {
      const peerFiles = async () => {
        if (label === 'SQLite') return engramFiles(mkdtempSync(join(folder, 'peer-')));
        const database = await createBenchDatabase(postgres!);
        cleanups.push(database.drop);
        return engramFiles(mkdtempSync(join(folder, 'peer-')), database.url);
      };
      const entries = await peerFiles();
      seedEngram(entries, subjects(0, options.entries));
      const team = await peerFiles();
      const tokens = await seedUsers(team, users);
      peers.push({ label, port: await startPeer(entries), users: { port: await startPeer(team), tokens } });
    }

    const rows: Row[] = [];
    const chosen = (label: string) => options.rows === undefined || options.rows.test(label);
    for (const connections of options.connections) {
      // A round at this N measures every row once, each workload's floor, SDK peer and
      // Engram rows one after another, so that the rows compared meet the same machine.
      const slots: Slot[] = [{ workload: CEILING, target: ceilingTarget }];
      const neighbourTarget = (neighbour: Neighbour, workload: string, name: string) =>
        workload === 'reads'
          ? reads(neighbour.port, `${name} reads`)
          : workload === 'durable writes'
            ? writes(neighbour.port, `${name} durable writes`, connections)
            : manyUsers(neighbour.users, connections, name);
      for (const workload of ['reads', 'durable writes', MANY_USERS]) {
        for (const floor of floors) {
          const floorRow = `${floorName(floor.label)} ${workload}`;
          const peer = peers.find((candidate) => candidate.label === floor.label);
          const peerRow = peer && `${peerName(peer.label)} ${workload}`;
          slots.push({ workload: floorRow, target: neighbourTarget(floor, workload, floorName(floor.label)) });
          if (floor.label === 'SQLite') {
            slots.push({
              workload: `${SCHEMA_FLOOR} ${workload}`,
              target: neighbourTarget(onSchema, workload, SCHEMA_FLOOR),
              floor: floorRow,
            });
          }
          if (peer) slots.push({ workload: peerRow!, target: neighbourTarget(peer, workload, peerName(peer.label)) });
          const engramTargets: { target: LoadTarget; serialRate: number; solo: boolean }[] =
            workload === MANY_USERS
              ? teams
                  .filter((team) => team.label === floor.label)
                  .map((team) => ({
                    target: manyUsers(team, connections, team.label),
                    serialRate: team.serialRate,
                    solo: false,
                  }))
              : backends
                  .filter((backend) => backend.label.startsWith(floor.label))
                  .map((backend) => ({
                    target:
                      workload === 'reads'
                        ? reads(backend.port, `${backend.label} reads`)
                        : writes(backend.port, `${backend.label} ${workload}`, connections),
                    serialRate: backend.serialRate,
                    solo: backend.label === SOLO,
                  }));
          for (const { target, serialRate, solo } of engramTargets) {
            slots.push({
              workload: target.label,
              target,
              floor: floorRow,
              // Engram without group commit has no peer (the peer's store commits in groups), only the floor.
              peer: solo ? undefined : peerRow,
              serialRate: workload === 'reads' ? undefined : serialRate,
            });
          }
        }
      }
      const measured = slots.filter((slot) => slot.workload === CEILING || chosen(slot.workload));
      const rates = new Map<string, LoadResult[]>(measured.map((slot) => [slot.workload, []]));
      for (let round = 0; round < options.rounds; round++) {
        // Every other round backwards, so that no row always runs first, or right after the same neighbour.
        for (const slot of round % 2 === 0 ? measured : [...measured].reverse()) {
          const warmupMs = round === 0 ? options.warmupMs : 0;
          rates.get(slot.workload)!.push(await runLoad(slot.target, connections, options.durationMs, warmupMs));
        }
      }
      /** The ratios of `row`'s rate over `other`'s, round by round, when both were measured. */
      const ratios = (row: string, other: string | undefined): Spread | undefined => {
        const over = other === undefined ? undefined : rates.get(other);
        if (over === undefined) return undefined;
        const perSecond = (results: readonly LoadResult[]) => results.map((result) => result.perSecond);
        return roundRatios(perSecond(rates.get(row)!), perSecond(over));
      };
      for (const slot of measured) {
        const result = medianResult(rates.get(slot.workload)!, connections);
        rows.push({
          connections,
          workload: slot.workload,
          result,
          ofCeiling: ratios(slot.workload, CEILING)!,
          serial: slot.serialRate === undefined ? undefined : formatRatio(result.perSecond / slot.serialRate),
          ofFloor: ratios(slot.workload, slot.floor),
          ofPeer: ratios(slot.workload, slot.peer),
        });
      }
    }
    return describe(options, rows, backends, postgres !== undefined);
  } finally {
    for (const child of children) await stopServer(child);
    for (const cleanup of cleanups) await cleanup();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Distinct requests per workload, each connection sending them in turn. */
const REQUEST_KINDS = 500;

/** A ratio as a whole percentage; `n/a` when it was not measured. */
function percent(value: number): string {
  return Number.isNaN(value) ? 'n/a' : `${Math.round(value * 100)}%`;
}

/** Engram's rate over the SDK peer's, and which is ahead. */
function peerRatio(ratio: number): string {
  return `${formatRatio(ratio)} ${ratio > 1 ? 'ahead' : 'behind'}`;
}

function describe(
  options: HttpOptions,
  rows: readonly Row[],
  backends: readonly Backend[],
  withPostgres: boolean,
): Section {
  /** The range of a ratio's rounds, as percentages: "61–72%". */
  const percentRange = (ratio: Spread) => `${Math.round(ratio.low * 100)}–${Math.round(ratio.high * 100)}%`;
  /** A median ratio with its rounds' range: "67% (61–72%)". */
  const percentSpread = (ratio: Spread) => `${percent(ratio.median)} (${percentRange(ratio)})`;
  const most = Math.max(...options.connections);
  const rowOf = (workload: string, connections = most) =>
    rows.find((row) => row.connections === connections && row.workload === workload);
  const rate = (workload: string) => rowOf(workload)?.result.perSecond ?? Number.NaN;
  /** The median of one of a row's ratios at the most connections; NaN when the row or its neighbour was not measured. */
  const ratioOf = (workload: string, ratio: 'ofCeiling' | 'ofFloor' | 'ofPeer') =>
    rowOf(workload)?.[ratio]?.median ?? Number.NaN;
  const table: Table = {
    title: 'Tool calls per second and latency',
    header: [
      'connections',
      'workload',
      'calls/s',
      'bare ceiling at this N',
      'share of ceiling',
      'share of MCP floor',
      'Engram / SDK peer',
      'mean latency',
      'p99',
      'writes / serial commits',
    ],
    rows: rows.map((row) => [
      String(row.connections),
      row.workload,
      formatInteger(row.result.perSecond),
      formatInteger(rowOf(CEILING, row.connections)!.result.perSecond),
      percent(row.ofCeiling.median),
      row.ofFloor === undefined ? '—' : percentSpread(row.ofFloor),
      row.ofPeer === undefined ? '—' : peerRatio(row.ofPeer.median),
      formatMs(row.result.mean),
      `${row.result.p99} ms`,
      row.serial ?? '—',
    ]),
  };
  const ceiling = rate(CEILING);
  /**
   * DESIGN §7's targets at the most connections: each workload against its MCP floor, the
   * least an MCP server keeping its memory in the same database does for the same calls;
   * the share of the bare ceiling stays beside it as a reference.
   */
  const goals: readonly (readonly [workload: string, goal: number])[] = [
    ['reads', 0.8],
    ['durable writes', 0.7],
    [MANY_USERS, 0.6],
  ];
  const checks = backends
    .filter((backend) => backend.label !== SOLO)
    .flatMap((backend) =>
      goals.map(([workload, goal]) => {
        const engram = rowOf(`${backend.label} ${workload}`);
        return {
          what: `${backend.label}: ${workload} at ${most} connections / its MCP floor`,
          goal,
          ofFloor: engram?.ofFloor,
          ofCeiling: ratioOf(`${backend.label} ${workload}`, 'ofCeiling'),
        };
      }),
    );
  const targets: Target[] = checks.map((check) => ({
    what: check.what,
    target: `≥ ${percent(check.goal)}`,
    measured:
      check.ofFloor === undefined
        ? `n/a (of the ceiling: ${percent(check.ofCeiling)})`
        : `${percent(check.ofFloor.median)} (rounds ${percentRange(check.ofFloor)}; of the ceiling: ${percent(check.ofCeiling)})`,
    // Unmeasured when `rows` left Engram's row or its floor's out.
    met: check.ofFloor === undefined ? undefined : check.ofFloor.median >= check.goal,
  }));
  /** Engram ahead of the SDK peer on every row of a backend: the lowest of its ratios. */
  const peerTargets: Target[] = backends
    .filter((backend) => backend.label !== SOLO)
    .map((backend) => {
      const compared = rows.filter((row) => row.ofPeer !== undefined && row.workload.startsWith(`${backend.label} `));
      const lowest = compared.reduce<Row | undefined>(
        (low, row) => (low === undefined || row.ofPeer!.median < low.ofPeer!.median ? row : low),
        undefined,
      );
      const ratio = lowest === undefined ? Number.NaN : lowest.ofPeer!.median;
      return {
        what:
          `${backend.label}: Engram / the SDK peer, on every row (reads, durable writes, writes of many users; ` +
          `${options.connections.join(', ')} connections)`,
        target: '> 1x on each',
        measured:
          lowest === undefined
            ? 'n/a'
            : `lowest ${formatRatio(ratio)} (${lowest.workload.slice(backend.label.length + 1)} at ${lowest.connections})`,
        met: lowest === undefined ? undefined : ratio > 1,
      };
    });
  targets.push(...peerTargets);
  const serialRates = backends.map((b) => `${b.label} ${formatInteger(b.serialRate)}/s`).join(', ');
  return {
    title: 'HTTP: engram serve under load',
    method:
      '`engram serve` (no auth, on loopback, logging one line per request to stderr as it does by default) holds ' +
      `${options.entries.toLocaleString('en-US')} entries of ~1 KiB seeded with \`engram import\`, on SQLite` +
      (withPostgres
        ? ' and, in a second server, on PostgreSQL (a database created for the run on the local server)'
        : '') +
      '. Each request is one stateless Streamable HTTP POST of a `tools/call`: reads open one entry of the first quarter, ' +
      'writes append a line to one of the rest (a durable commit each), so that what a read answers stays the same ' +
      `size all through the run; the writes at each N go to entries of their own (the rest in ${options.connections.length} ` +
      'parts), so that every server meets them as seeded whatever it wrote at the smaller N; ' +
      `each connection sends ${REQUEST_KINDS} distinct requests in turn. ` +
      '“Many users” rows are writes to a server of their own (`--auth token`, its own database): at N connections N ' +
      `users, each with ${USER_ENTRIES} entries of its own and one token, connection k sending user k’s token. The ceiling is a bare ` +
      '`node:http` server in its own process answering every POST with a fixed body, byte for byte what Engram answers to ' +
      'a read. The MCP floor is the least an MCP server ' +
      'keeping its memory in a database must do for these calls, and nothing more: a `node:http` server in its own process ' +
      '(bench/floor-server.ts), one on each backend, holding the same entries and users in a database of its own, that ' +
      'finds the user from the bearer token in memory, parses each request and answers a JSON result, an open with one ' +
      'indexed read of the entry’s latest revision (on PostgreSQL the opens that arrive while others run going together ' +
      'in one statement, as Engram’s do), an append with the rows of the in-process fair floor (a new ' +
      'revision, the entry’s head, the user’s usage) saved durably: on SQLite the appends that arrive together sharing ' +
      'one commit, on PostgreSQL one statement, one user’s appends one at a time and those that queued meanwhile ' +
      'sharing one transaction and its commit (as Engram’s), ' +
      'on a pool of Engram’s default size (10). An Engram row’s share of it compares the two for the same workload at ' +
      'the same N on the same backend. The MCP floor on Engram’s SQLite schema is the same server and group commit ' +
      'over Engram’s own statements (bench/engram-statements.ts: the store’s prepared SQL, on a connection opened and ' +
      'migrated as the store opens one, in a database of its own seeded as Engram’s): an open reads the entry as ' +
      'Engram’s does, an append reads the entry and the user’s counters, updates the entry, adds its revision, reads ' +
      'the search watermark and moves the counters, and nothing else (no search index catching up, no token in the ' +
      'database, no checks): its share of the floor is what Engram’s schema, which keeps history, activity and the ' +
      'counters DESIGN asks to be read back, costs these calls, and the most Engram’s code could reach on it. The SDK peer is the same memory served the common way: a `node:http` server in ' +
      'its own process (bench/sdk-peer-server.ts), two on each backend as Engram’s (one holding the entries, one the ' +
      'users), that gives every POST a new MCP SDK v1 ' +
      '(`@modelcontextprotocol/sdk`) `Server` and a new `StreamableHTTPServerTransport` with `sessionIdGenerator: ' +
      'undefined` (stateless, answering as an SSE stream, the SDK’s default), connects them, hands it the request and ' +
      'closes both once answered, as the SDK’s own stateless example does; under the SDK it is Engram’s: the tool ' +
      'definitions, the tool handler and the store, opened through Engram’s composition root on a database seeded as ' +
      'Engram’s are. A request without a token acts as the local user; with one, Engram’s own token check finds the user ' +
      '(the Access service, on every request, as `--auth token` does). It does less around a call than `engram serve` ' +
      '(no log line, no rate limit, no size or Origin checks), all in its favour. “Engram / SDK peer” is an Engram ' +
      'row’s rate over the peer’s for the same ' +
      'workload at the same N on the same backend: what Engram’s way of serving MCP over HTTP gains over the common ' +
      'one, Engram having to be ahead on every row. The load comes from autocannon in a process ' +
      `of its own (${GENERATOR_WORKERS} worker thread driving all N keep-alive connections, each sending its next request when ` +
      'the previous answer has arrived; every answer checked), never from the benchmark process, the same way for every row: ' +
      `${options.warmupMs / 1000} s of warm-up before its first round, then ${options.durationMs / 1000} s counted in each ` +
      'round (a new set of connections each time). Servers and generator share the ' +
      `machine’s cores, and other work on this machine comes and goes, so each N is measured in ${options.rounds} ` +
      'rounds: a round measures every row once, in turn (the ceiling, then for each workload the floor, the SDK peer and ' +
      'Engram one after another on each backend; every other round in the opposite order), and a row’s rate and p99 ' +
      'are the medians of its rounds. Each ratio (of the ceiling, of the floor, over the peer) is the median of the ' +
      'ratios of the two rows’ rates round by round, measured seconds apart; the share of the floor and the targets ' +
      'give the range of its rounds beside it. Mean latency is N / rate (a closed loop); p99 is autocannon’s, to the ' +
      'whole millisecond. ' +
      'The serial commit rate is raw durable commits of one distinct 1 KiB row each, one after another, on the same disk ' +
      `(better-sqlite3 in WAL mode with synchronous=FULL; node-postgres on one connection): ${serialRates}.` +
      (withPostgres ? '' : ' No PostgreSQL server answered, so PostgreSQL was not measured.'),
    tables: [table],
    targets,
    reading: [
      ...backends
        .filter((backend) => backend.label !== SOLO)
        .map((backend) => {
          const floor = floorName(backend.label as Neighbour['label']);
          const ofCeiling = (workload: string) => percent(ratioOf(`${floor} ${workload}`, 'ofCeiling'));
          const ofFloor = (workload: string) => percent(ratioOf(`${backend.label} ${workload}`, 'ofFloor'));
          return (
            `The MCP floor on ${backend.label} at ${most} connections: reads ${formatInteger(rate(`${floor} reads`))}/s, ` +
            `${ofCeiling('reads')} of the ceiling; durable writes ${formatInteger(rate(`${floor} durable writes`))}/s, ` +
            `${ofCeiling('durable writes')} of it; writes of ${most} users ${formatInteger(rate(`${floor} ${MANY_USERS}`))}/s, ` +
            `${formatRatio(rate(`${floor} ${MANY_USERS}`) / backend.serialRate)} the serial commit rate. Engram on ` +
            `${backend.label}: reads at ${ofFloor('reads')} of the floor’s rate, durable writes at ` +
            `${ofFloor('durable writes')}, writes of ${most} users at ${ofFloor(MANY_USERS)}.`
          );
        }),
      schemaReading(most, ratioOf),
      ...backends
        .filter((backend) => backend.label !== SOLO)
        .map((backend) => {
          const peer = peerName(backend.label as Neighbour['label']);
          const ahead = (workload: string) => formatRatio(ratioOf(`${backend.label} ${workload}`, 'ofPeer'));
          return (
            `The SDK peer on ${backend.label} at ${most} connections: reads ${formatInteger(rate(`${peer} reads`))}/s, ` +
            `durable writes ${formatInteger(rate(`${peer} durable writes`))}/s, writes of ${most} users ` +
            `${formatInteger(rate(`${peer} ${MANY_USERS}`))}/s; Engram’s rates over them ${ahead('reads')}, ` +
            `${ahead('durable writes')} and ${ahead(MANY_USERS)}.`
          );
        }),
      'The bare ceiling is a reference, not a target: parsing a request, one statement (SQLite’s with its read lock, ' +
        'two fcntl and an fstat; PostgreSQL’s a round trip) and a JSON answer cost several times the bare server’s ' +
        'whole exchange, so no Node server doing this work comes near it; the floor does that work and nothing more.',
      `Group commit at ${most} connections: SQLite durable writes ${formatInteger(rate('SQLite durable writes'))}/s with it, ` +
        `${formatInteger(rate(`${SOLO} durable writes`))}/s without (every write its own commit and fsync).`,
      ...backends
        .filter((backend) => backend.label !== SOLO)
        .map((backend) => {
          const ofCeiling = (workload: string) => percent(ratioOf(`${backend.label} ${workload}`, 'ofCeiling'));
          const write = rate(`${backend.label} durable writes`);
          const many = rate(`${backend.label} ${MANY_USERS}`);
          return (
            `${backend.label}: at ${most} connections reads run at ${ofCeiling('reads')} of the ceiling ` +
            `(${formatInteger(ceiling)}/s), durable writes at ${ofCeiling('durable writes')} of it and ` +
            `${formatRatio(write / backend.serialRate)} the serial commit rate; writes of ${most} users ` +
            `${formatRatio(many / backend.serialRate)} the serial commit rate.`
          );
        }),
      'Where the time goes (profiled with --cpu-prof under this load): for reads, the kernel’s socket writes (writev, ' +
        'a quarter to a third of the busy time, as large a share in the bare server’s own profile) and Node’s own HTTP ' +
        'parsing and streams (about a fifth), then the store read (about a sixth: one statement and SQLite’s read lock, ' +
        'three system calls) and the opened entry’s formatting (about a tenth, most of it the boundary tag’s SHA-256); ' +
        'Engram’s routing, checks, fast path, JSON and log line share the rest, none of them a tenth. Per read, the event ' +
        'loop’s thread (user and system CPU over calls, at 64 connections, on a fresh database) spent 100–145 µs in ' +
        'Engram and ~53 µs in the floor. Copies of the built server with one part switched off, run side by side: ' +
        'answering every tools/call with a fixed text of the same bytes, without entering the tool handler, 56–59 µs ' +
        '(Engram’s HTTP and MCP path costs what the floor’s whole read does); the SQLite read answered from a memo, ' +
        '~20 µs less; without the boundary tag’s SHA-256 or without the log line, no change beyond the noise. So ' +
        'the gap is the tool handler’s path (argument checks, the Memory service, the store read, formatting, the ' +
        'result’s JSON): some 60 µs a read under this load, where the same calls take ~14 µs one after another in ' +
        'process. Of that, garbage collection (measured by hand on 2026-12-06, --trace-gc-nvp over 20,000 reads, each ' +
        'server started afresh): until `engram serve` turned V8’s allocation-site pretenuring off, about half of its ' +
        'starts ran with a per-request object literal allocated in the old generation (judged long-lived as the ' +
        'clients connected), and from then on every read promoted ~3.6 KB: 3–4x the scavenges’ time, 10–20 µs a read of ' +
        'the event loop, a full collection every few seconds; now none do. The same tool calls made 64 at a time in ' +
        'process cost what they cost one after another (13–14 µs of CPU): nothing in the handler grows with ' +
        'concurrency; but under load its store read takes ~11 µs of the loop against 6–7 µs in process (a colder CPU ' +
        'cache, which this machine’s virtual CPU gives no counters to count, but a simulation does). Counted by ' +
        'callgrind (by hand on 2026-12-07, a simulated 1 MiB last-level cache like this CPU’s L2, 1,000 reads at 64 ' +
        'connections after 8,000 uncounted): Engram’s event-loop thread runs ~345,000 instructions a read, the ' +
        'floor’s 185,000–191,000, at the same rates of L1 misses and mispredicted branches per instruction, but with ' +
        '4x the floor’s misses past L2 (5.5x fetching code: the code one read runs through, Node’s HTTP stack, ' +
        'Engram’s door and its handler, does not fit that cache at once). The handler runs as many instructions a ' +
        'call under load as in process (151,000–174,000), so it does no more work under load, only colder. Of the ' +
        '~160,000 more than the floor: the boundary tag 41,000 (mostly SHA-256, which valgrind runs without this ' +
        'CPU’s SHA instructions: natively a fraction of that), Node’s own process.nextTick going through V8’s runtime ' +
        '24,000 in half the runs (an object literal in Node’s task queue), the log line 20,000, the HTTP checks before ' +
        'the MCP body (answer headers, routing, Host and Origin, request id, client address) 16,000–27,000, the store ' +
        'read 26,000 against the floor’s 25,000 since its row is read as an array (34,000 as an object; that and a ' +
        'regex cutting trailing newlines, 11,000, went on 2026-12-07). Later that day the door lost another ' +
        '~20,000–30,000 a read (300,000–324,000 counted, side by side with the build before, no cache simulation): ' +
        'the body taken at once when its declared bytes are all buffered, no await for a rate limit that is off or an ' +
        'endpoint already loaded, header checks without a string per header, the log line from one template, ' +
        'SHA-256 in one call. It counted 6 nextTicks a read, as many as the floor’s, all Node’s own (the body read ' +
        'and ended, the request destroyed, the answer written and closed). An Engram read makes one system call ' +
        'more than the floor’s, an fstat (SQLite sizes its memory map at each read): 0.2 µs, measured in process. ' +
        'With a token, its hash and lookup on every request (not cached: a revoke from the CLI must take effect at ' +
        'once). For durable writes the event loop is busy, not waiting: the store’s CPU per write (its statements, and ' +
        'the search index catching up, about a third of the loop’s time at 64 connections with schema 13), so moving the fsync off the ' +
        'loop was measured to gain nothing (0.98x); and group commit can only spare the fsyncs, which on this disk are a ' +
        'small part of a write (the serial commit rate, fsync included, is several times the write rate), so with and ' +
        'without it differ by little either way. PostgreSQL: about 0.9 ms of Node and 0.75 ms of PostgreSQL CPU per write ' +
        'on these two cores, after a write went from 8 round trips to 1–2 and concurrent reads were batched: with a ' +
        'token, its lookup (some 0.1 ms of PostgreSQL CPU), then one statement that saves the write and commits. No row ' +
        'is shared between users (each user’s counters are a row of their own; a token’s last use is written once a ' +
        'minute). Of a save’s PostgreSQL CPU (backend CPU, statement by statement, interleaved, by hand on ' +
        '2026-12-06: 617 µs a save of a ~1.2 KiB body), making the search vector took a third (403 µs with the ' +
        'vector left as it was; a vector sent ready-made is parsed as dearly) and its GIN index’s insert under a ' +
        'tenth (347 µs with no vector; 1.55x without GIN’s fast-update list): a write now sends each word once ' +
        '(480 µs), deriving the words in SQL from the body was dearer (738 µs). A raw commit of one 1 KiB row is ' +
        'about a quarter; without the revisions’ foreign key or one of their indexes, or with lz4 instead of pglz, ' +
        'no measurable change. Eight saves in one transaction took 0.7x the backend CPU and half the time each of ' +
        'eight alone, so one user’s writes that wait behind each other share one transaction and its commit ' +
        '(shared-commit.ts); several users’ writes together would need savepoints to keep one’s failure from ' +
        'another’s, and PostgreSQL’s WAL group commit already shares their fsyncs.',
      'Why many users’ writes on SQLite sit further below their floor than one user’s (measured by hand on 2026-12-06, not by this run; ' +
        '64 users at 64 connections, `engram serve --auth token`): the search index catching up after each write is ' +
        'about a third of the work (3,000–3,400 writes/s as shipped; 4,500–5,000/s from a copy of the built server ' +
        'with the catch-up switched off, the floor 12,500–15,000/s). Group commit shares one fsync among some 90 writes ' +
        'in both Engram and the floor (strace: 96 fsyncs and 19,505 page writes for ~8,900 writes), so what is left is ' +
        'the pages each write dirties: 2.2 WAL page writes per write against the floor’s 0.95. A floor write dirties ' +
        'its entry’s row and shares the revisions’ last page and the usage page with its batch; an Engram write also ' +
        'dirties, per entry or per user, a leaf of the revisions’ (entry, revision) key that history reads by and of ' +
        'the activity index (user, time) — each a query DESIGN asks for — and, before schema 20, of the index lines’ ' +
        'covering index (in process, 64 users’ appends committed together dirty ~3.5 WAL pages each with schema 20 ' +
        'against ~4.5 before, and take 8–17% less CPU each, the two schemas interleaved in one process). Before ' +
        'writes woke on the search worker’s release of the write gate (they retried on a 1–100 ms timer, both sides ' +
        'idle meanwhile), the same workload ran at 2,600–3,300/s with a p99 of 57–77 ms; now 3,160–3,400/s, p99 42–51 ms. ' +
        'On PostgreSQL, measured the same way: 1,650–1,690 writes/s, the server’s process spending 0.35–0.43 ms of CPU ' +
        'per write, where the floor’s does 4,800–5,100/s at 0.11–0.14 ms. In its profile a third of the event loop’s ' +
        'time is the socket write that sends a save to PostgreSQL (on two busy cores the backend it wakes runs in that ' +
        'time) and a third is idle: the work is PostgreSQL’s. A save sends the body and the words its search vector ' +
        'is made of (each once since 2026-12-06), PostgreSQL stores the body once (in its revision) and updates the ' +
        'GIN index; the floor’s append sends one line and stores the body once. ' +
        'Where a many-users write’s work goes on SQLite (measured by hand on 2026-12-07, by instruction counts, which ' +
        'load does not change: each server under valgrind, 64 users at 64 connections, the count of 2,400 writes less ' +
        'that of 800, both after 1,500 unmeasured; V8’s optimizing compiler, still catching up under valgrind in ' +
        'both, left out): Engram ~1,160 thousand instructions a write, the floor ~230 thousand. The search catch-up’s ' +
        'FTS5 work is ~410 thousand of Engram’s (merging segments ~165, tokenizing each entry whole again ~90 and ' +
        'filing its words ~40, writing the new segments ~115; valgrind’s slow writes make its batches smaller than at ' +
        'full speed, so the merging is overstated); JavaScript, V8’s runtime and its garbage collection ~550 thousand ' +
        'against the floor’s ~180 (varying by half from run to run); SQLite’s other work ~140 against ~19; memset, ' +
        'memcpy and memcmp ~90 against ~7 (memset ~42: FTS5’s flushes, and secure_delete zeroing freed cells, 13 a ' +
        'write, and pages). The token check is not the gap: a copy of the built server that memoized it (revocation ' +
        'ignored) saved ~7.5 thousand SQLite instructions a write, under 1%, and its CPU per write was 0.83–1.04x the ' +
        'same build’s in three interleaved pairs, a few percent at most, so it still reads the store on every ' +
        'request. Per write (strace -c -f over 10,000): 13.7 pwrite64 and 4.9 pread64 against the floor’s 3.5 and 0.7 ' +
        '(the worker’s commits make the loop’s connection drop its page cache), 5.4 WAL frames (both connections). ' +
        'The server’s CPU per write (user and system, all threads, 10,000 writes, interleaved): 410–730 µs against ' +
        'the floor’s 104–173 µs. The worker now catches up 64 entries a commit rather than 16: 8–20% less CPU per ' +
        'write in each of seven interleaved pairs (414–548 µs against 478–672 µs), writes/s 0.95–1.9x (median 1.27x), ' +
        'p99 lower in four pairs and higher in three (by up to a quarter); 256 a commit saved some 7% more CPU, but a ' +
        'write may wait for a whole batch.',
      'What the search worker and the checkpoints cost a write on SQLite (measured by hand on 2026-12-07, not by ' +
        'this run; 64 connections appending to 64 entries, CPU per write of each of the server’s threads from /proc, ' +
        'interleaved): the search worker’s thread spent ~520 µs a write, more than the event loop’s ~400–520, ' +
        're-indexing the same entries for each of their revisions; a catch-up batch now indexes each entry once ' +
        'however many of its revisions wait (it reads up to 1,024 revisions past its watermark to find its 64 ' +
        'entries): ~150–200 µs, writes/s 1.14–1.46x in three pairs. SQLite’s automatic checkpoint (every 1,000 pages ' +
        'of log) then ran inside the COMMIT of whichever write crossed it, on the event loop; the worker now ' +
        'checkpoints after each catch-up, off the loop, with the loop’s connection as a backstop past 4,000 pages: ' +
        'writes/s 1.20–1.35x in three pairs, the loop’s CPU per write ~10% lower. Both are in this run’s figures; the ' +
        'log may now grow to ~20 MB under sustained writes (19–22 MB measured, also once the worker checkpointed ' +
        'every 16 batches of a long catch-up too). A write of an entry at its history limit trims a revision: summed ' +
        'then deleted, where a DELETE … RETURNING buffered its rows, less CPU per such append in process in each of ' +
        'six interleaved pairs (0.65–0.98x, median 0.925x).',
      'Why a search catch-up cost more than indexing its entries’ words (measured by hand on 2026-12-07, later that ' +
        'day, not by this run; CPU per write of each of the server’s threads from /proc, the writes counted in the ' +
        'database, 64 connections): each entry of a batch went into the index by a statement of its own, and FTS5 ' +
        'writes what it holds in memory as a segment of its own when the next statement starts, so a batch of 64 ' +
        'entries wrote 64 segments, then merged them eight at a time. Now a batch’s deletes come first, in rowid ' +
        'order, then one statement inserts all its entries: the worker’s CPU per write 82–91 µs against 106–139 with ' +
        '64 users writing, 161–185 against 184–244 with one user appending to 500 entries, three interleaved pairs ' +
        'each. FTS5’s secure-delete was then about half of what was left (42% of the worker’s samples, perf), more as ' +
        'entries grew: it looked up every word of each entry indexed again in the older segments and, on this ' +
        'contentless_delete table, cut nothing out (the index’s bytes were the same without it; the words an edit ' +
        'removed stay until a merge either way, and a purge merges the whole index). Schema 21 turned it off: with one ' +
        'user appending to 500 entries (8 s each, two interleaved pairs), the worker’s CPU per write 91–94 µs against ' +
        '324–357, writes/s 4,420–4,470 against 2,240–2,410. With 64 users the event loop’s CPU per ' +
        'write is now the larger part, 230–305 µs against the worker’s 82–91 (the COMMIT 15% of the loop’s samples, ' +
        'wall time with its fsync; the entry read before the write 7%; the token’s lookup ~5%); with one user the two ' +
        'are about even (the loop’s 150–175 µs).',
      'Why an entry written again and again is now indexed once a catch-up (measured by hand on 2026-12-07, not ' +
        'by this run; 64 connections appending to 500 entries, 6–8 s each, CPU per write of each of the server’s ' +
        'threads from /proc, interleaved pairs): a batch indexed the first 64 distinct entries of the revisions past ' +
        'its watermark, so with 500 entries written in turn it moved the watermark some 70 revisions a batch and ' +
        'indexed an entry again for nearly every write. Now a batch turns the revisions past the watermark into marks ' +
        '(one per entry), moves the watermark past them, and indexes the marked entries in turn, and the worker ' +
        'catches up a second after writes rather than 100 ms, checkpointing the log every 100 ms meanwhile: the ' +
        'worker’s CPU per write 31–37 µs against 93–101, writes/s 5,049–5,708 against 4,434–4,786, in two pairs ' +
        '(with the marks in turn and 100 ms, 60–74 µs). A search still sees every write before it: it catches up ' +
        'first, now each waiting entry once. And while the worker runs, neither connection maps the file into ' +
        'memory: the worker’s catch-ups and checkpoints grow the file again and again, and at each new size every ' +
        'connection unmapped its map and faulted its pages in again (munmap and page faults ~8% of the loop’s ' +
        'samples with 64 users writing); reading the pages SQLite does not hold costs less, the worker’s commits ' +
        'resetting the loop’s page cache anyway: in six interleaved pairs (64 users, or one user appending to 500 ' +
        'entries) the loop’s CPU per write was lower in five and writes/s higher in five.',
      'What an append and a rate limit cost a write on PostgreSQL (measured by hand on 2026-12-07, not by this run; ' +
        '64 connections, CPU per write of the server’s threads and of every PostgreSQL process from /proc, ' +
        'interleaved pairs of 10–12 s; this machine’s PostgreSQL runs swing by half from one run to the next, both ' +
        'servers and the floor alike). Every save made the entry’s search vector from the distinct words of its whole ' +
        'body, in the server (~15% of the event loop’s samples appending to grown entries) and again in PostgreSQL; ' +
        'an append that keeps the name and description only adds words after a line break, so it now adds to the ' +
        'vector the appended text’s words it lacks: one user appending to 500 entries, 1,885, 1,189 and 1,791 ' +
        'writes/s against 1,369, 1,361 and 1,269; 64 users, higher in all six pairs (1,155–1,800 against ' +
        '1,064–1,307). Alone, the same update (one connection, 1–13 KiB bodies) took 6–22% less backend CPU and ' +
        '18–35% less time. And the per-token limit went to PostgreSQL as one upsert per busy token every 100 ms, all ' +
        'tokens at once: with 64 users, 640 statements a second, one for every two saves; now one statement carries ' +
        'every token’s count of that moment (345 statements for ~11,000 saves, against 3,892 for ~8,000), writes/s ' +
        'higher in four of six pairs.',
    ],
  };
}

/**
 * What the floor on Engram's schema says at the most connections: each workload's share of
 * the floor on the schema alone, and Engram's against it (the two shares' medians divided).
 */
function schemaReading(most: number, ratioOf: (workload: string, ratio: 'ofFloor') => number): string {
  const workloads = [
    ['reads', 'reads'],
    ['durable writes', 'durable writes'],
    [MANY_USERS, `writes of ${most} users`],
  ] as const;
  const onSchema = workloads.map(
    ([workload, words]) => `${words} ${percent(ratioOf(`${SCHEMA_FLOOR} ${workload}`, 'ofFloor'))}`,
  );
  const engram = workloads.map(
    ([workload, words]) =>
      `${words} ${percent(ratioOf(`SQLite ${workload}`, 'ofFloor') / ratioOf(`${SCHEMA_FLOOR} ${workload}`, 'ofFloor'))}`,
  );
  return (
    `On Engram’s SQLite schema, the same floor at ${most} connections keeps ${onSchema.join(', ')} of the floor’s ` +
    `rate: the most Engram’s code could reach on this schema, against the targets of 80%, 70% and 60%. Engram on ` +
    `SQLite reaches about ${engram.join(', ')} of the floor on its schema: the rest is its code (the door’s checks, ` +
    'the tool handler, the Memory service, the storage engine) and, for writes, the search index catching up.'
  );
}
