/**
 * `npm run bench:compare -- <git-ref> [benchmark…] [--rounds N] [--quick] [--rows PATTERN] [--out FILE]`:
 * the benchmark of this checkout and of an earlier commit, side by side in one run, so
 * that a change is judged against what it replaced on the same machine in the same hour,
 * never against figures from elsewhere.
 *
 * The earlier commit is extracted with `git archive` into a folder of its own and built
 * there with this checkout's node_modules (its own tsc, the TypeScript 7 compiler, which an
 * earlier commit reached as `tsc`); each build runs its own benchmark code on its own
 * dist/. The benchmarks run one at a time, before and after in turn, and in the opposite
 * order the next round (A B, then B A), so neither build always runs second on a warmer
 * machine. Their markdown tables are matched by section, table title and row; every time
 * (lower is better) and every calls/s figure (higher is better) is compared, the
 * figures of several rounds averaged geometrically, and a change past ±5% is named. The
 * within-run ratios (x, %) are shown beside, unjudged: they are the benchmark's own
 * comparisons of neighbours, and a figure that moved with its floor is noise.
 */

import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(root, 'node_modules', '@typescript', 'native', 'bin', 'tsc');
/** A change of a judged figure beyond this share is named as better or worse. */
const THRESHOLD = 0.05;

const USAGE = `usage: npm run bench:compare -- <git-ref> [benchmark…] [--rounds N] [--quick] [--rows PATTERN] [--out FILE]

Runs \`npm run bench\`'s benchmarks for <git-ref> (built in a folder of its own) and for this
checkout, in turn, and prints their figures side by side with the change of each.
  benchmark…   the benchmarks to run (default: every one both builds have)
  --rounds N   run each benchmark N times per build, alternating which goes first (default 2)
  --quick      the benchmarks' quick mode, for trying this script
  --rows PATTERN  only the HTTP rows whose workload it matches (npm run bench's --rows)
  --out FILE   also write the comparison (markdown) to FILE`;

function parseArguments(argv) {
  const options = { ref: undefined, names: [], rounds: 2, quick: false, rows: undefined, out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg === '--quick') options.quick = true;
    else if (arg === '--rounds') {
      options.rounds = Number(argv[++i]);
      if (!Number.isInteger(options.rounds) || options.rounds < 1) fail('--rounds takes a whole number, 1 or more');
    } else if (arg === '--rows') {
      options.rows = argv[++i];
      if (!options.rows) fail('--rows takes a regular expression');
    } else if (arg === '--out') {
      options.out = argv[++i];
      if (!options.out) fail('--out takes a file name');
    } else if (arg.startsWith('-')) fail(`unknown option ${arg}`);
    else if (options.ref === undefined) options.ref = arg;
    else options.names.push(arg);
  }
  if (options.ref === undefined) fail('name the git commit to compare against (e.g. main~3 or a hash)');
  return options;
}

function fail(message) {
  console.error(`bench:compare: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function run(command, args, cwd, extraEnv = {}) {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...extraEnv } });
}

/**
 * node_modules for the earlier build: this checkout's packages, linked, with a `.bin` whose
 * `tsc` is the TypeScript 7 compiler (an earlier package.json had it as `typescript`).
 */
function linkModules(folder) {
  const modules = join(folder, 'node_modules');
  const bin = join(modules, '.bin');
  mkdirSync(bin, { recursive: true });
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name !== '.bin') symlinkSync(join(root, 'node_modules', name), join(modules, name));
  }
  for (const name of readdirSync(join(root, 'node_modules', '.bin'))) {
    if (name !== 'tsc') symlinkSync(join(root, 'node_modules', '.bin', name), join(bin, name));
  }
  symlinkSync(TSC, join(bin, 'tsc'));
}

/** Builds Engram and its benchmarks in `folder` (dist/, dist-bench/ with spec/ beside). */
function buildWithBench(folder) {
  run(process.execPath, ['scripts/build.mjs'], folder);
  run(process.execPath, [TSC, '-p', 'tsconfig.bench.json'], folder);
  cpSync(join(folder, 'spec'), join(folder, 'dist-bench', 'spec'), { recursive: true });
}

/**
 * The earlier commit, extracted and built once per commit, lock file and checkout (kept in
 * the system's temporary folder): its node_modules are links into this checkout's, so a
 * build made from another checkout (a worktree since removed) is never used. Two runs
 * preparing the same build at once take turns (buildingLock): the second finds it built.
 */
function prepareBaseline(ref) {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  // Built with this checkout's node_modules (the CLI bundle takes its dependencies in): kept per commit and lock file.
  const key = createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .update(root)
    .digest('hex')
    .slice(0, 8);
  const folder = join(tmpdir(), `engram-bench-baseline-${commit.slice(0, 12)}-${key}`);
  const release = buildingLock(folder);
  try {
    if (!existsSync(join(folder, 'dist-bench', 'bench', 'run.js'))) {
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { recursive: true });
      console.error(`bench:compare: extracting ${commit.slice(0, 12)} into ${folder} and building it…`);
      execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${folder}'`], { cwd: root, stdio: 'inherit' });
      linkModules(folder);
      buildWithBench(folder);
    }
  } finally {
    release();
  }
  return { commit, folder };
}

/** A lock held past this is taken to be a run that died while building, and is taken over. */
const STALE_LOCK_MS = 30 * 60_000;

/**
 * Waits until no other run is building `folder`, then holds a lock (a folder beside it,
 * made in one step) until the returned function is called.
 */
function buildingLock(folder) {
  const lock = `${folder}.lock`;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    let age = 0;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue;
    }
    if (age > STALE_LOCK_MS) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) console.error(`bench:compare: another run is building ${folder}; waiting for it…`);
    told = true;
    Atomics.wait(pause, 0, 0, 1_000);
  }
}

/** Runs one benchmark of the build in `folder`; its markdown on stdout, or undefined when that build has no such benchmark. */
function runBenchmark(folder, name, quick, rows) {
  return new Promise((resolve, reject) => {
    const args = [
      join('dist-bench', 'bench', 'run.js'),
      name,
      ...(quick ? ['--quick'] : []),
      ...(rows === undefined ? [] : ['--rows', rows]),
    ];
    const child = spawn(process.execPath, args, { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(stdout);
      else if (/unknown benchmark/.test(stderr)) resolve(undefined);
      else reject(new Error(`the benchmark ${name} in ${folder} failed (exit ${code})`));
    });
  });
}

/** Every markdown table in a benchmark's output: its section, title, header and rows. */
export function parseTables(markdown) {
  const tables = [];
  let section = '';
  let title = '';
  let table;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    else if (/^\*\*.+\*\*$/.test(line.trim())) title = line.trim().slice(2, -2);
    if (!line.startsWith('|')) {
      table = undefined;
      continue;
    }
    const cells = line
      .slice(1, line.lastIndexOf('|'))
      .split('|')
      .map((cell) => cell.trim());
    if (table === undefined) {
      table = { section, title, header: cells, rows: [] };
      tables.push(table);
    } else if (!cells.every((cell) => /^-+:?$/.test(cell))) table.rows.push(cells);
  }
  return tables;
}

const TIME_UNITS = { ns: 1e-9, µs: 1e-6, us: 1e-6, ms: 1e-3, s: 1 };

/**
 * What a cell measures: a time (lower is better), a rate (calls/s, higher is better), a
 * within-run ratio, share or size (shown, not judged), or nothing (a label).
 */
export function readCell(cell, column, title) {
  const time = /^([\d,]*\.?\d+)\s*(ns|µs|us|ms|s)\b/.exec(cell);
  if (time) return { kind: 'time', value: Number(time[1].replaceAll(',', '')) * TIME_UNITS[time[2]] };
  const size = /^([\d,]*\.?\d+)\s*(B|KiB|MiB|GiB)\b/.exec(cell);
  if (size) return { kind: 'ratio', value: Number(size[1].replaceAll(',', '')), unit: size[2] };
  const ratio = /^([\d,]*\.?\d+)(x|%)/.exec(cell);
  if (ratio) return { kind: 'ratio', value: Number(ratio[1].replaceAll(',', '')), unit: ratio[2] };
  const number = /^([\d,]*\.?\d+)(\s*\(|$)/.exec(cell);
  if (number && /\/s\b/.test(`${column} ${title}`))
    return { kind: 'rate', value: Number(number[1].replaceAll(',', '')) };
  return undefined;
}

/** Every figure of a run, keyed by section, table, row (its label cells) and column. */
export function figures(markdown) {
  const found = new Map();
  for (const table of parseTables(markdown)) {
    if (table.title.startsWith('Targets')) continue;
    for (const row of table.rows) {
      const read = row.map((cell, i) => readCell(cell, table.header[i] ?? '', table.title));
      // The cells before the first figure name the row (entries, operation, workload…).
      const first = read.findIndex((found) => found !== undefined);
      const labels = row.slice(0, first === -1 ? row.length : first);
      row.forEach((cell, i) => {
        if (read[i] === undefined) return;
        const key = [table.section, table.title, labels.join(' · '), table.header[i] ?? `column ${i + 1}`].join(' ¦ ');
        found.set(key, {
          ...read[i],
          cell,
          section: table.section,
          title: table.title,
          row: labels.join(' · '),
          column: table.header[i],
        });
      });
    }
  }
  return found;
}

function geometricMean(values) {
  return Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
}

/** Before and after for every figure both runs have: the change, and whether it is past the threshold. */
export function compare(beforeRuns, afterRuns) {
  const before = beforeRuns.map(figures);
  const after = afterRuns.map(figures);
  const rows = [];
  for (const [key, figure] of after[0]) {
    const olds = before.map((run) => run.get(key)).filter((found) => found?.value > 0);
    const news = after.map((run) => run.get(key)).filter((found) => found?.value > 0);
    if (olds.length === 0 || news.length === 0) continue;
    const old = geometricMean(olds.map((found) => found.value));
    const now = geometricMean(news.map((found) => found.value));
    const change = now / old;
    let verdict = '';
    if (figure.kind !== 'ratio') {
      const better = figure.kind === 'time' ? change < 1 - THRESHOLD : change > 1 + THRESHOLD;
      const worse = figure.kind === 'time' ? change > 1 + THRESHOLD : change < 1 - THRESHOLD;
      verdict = worse ? 'worse' : better ? 'better' : 'same';
    }
    rows.push({ ...figure, before: olds.map((f) => f.cell), after: news.map((f) => f.cell), change, verdict });
  }
  return rows;
}

function render(rows, facts) {
  const worse = rows.filter((row) => row.verdict === 'worse');
  const judged = rows.filter((row) => row.verdict !== '');
  const lines = [
    '# Benchmark: before and after, in one run',
    '',
    `- before: ${facts.commit} (${facts.ref}); after: this checkout${facts.dirty ? ' (with uncommitted changes)' : ''} at ${facts.head}`,
    `- benchmarks: ${facts.names.join(', ')}; ${facts.rounds} round(s) each, alternating which build runs first${facts.quick ? '; quick mode' : ''}`,
    `- ${judged.length} times and rates compared: ${worse.length} worse by more than ${THRESHOLD * 100}%, ` +
      `${judged.filter((row) => row.verdict === 'better').length} better, the rest within ±${THRESHOLD * 100}%; ` +
      'ratios within each run are shown unjudged',
    '',
  ];
  let table = '';
  for (const row of rows) {
    const where = `${row.section} — ${row.title}`;
    if (where !== table) {
      table = where;
      lines.push(
        '',
        `**${where}**`,
        '',
        '| row | figure | before | after | after / before | |',
        '| --- | --- | ---: | ---: | ---: | --- |',
      );
    }
    const change = `${row.change.toFixed(3)}x`;
    const verdict = row.verdict === 'worse' ? '**worse**' : row.verdict;
    lines.push(
      `| ${row.row} | ${row.column} | ${row.before.join('; ')} | ${row.after.join('; ')} | ${change} | ${verdict} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const baseline = prepareBaseline(options.ref);
  console.error('bench:compare: building this checkout…');
  buildWithBench(root);
  const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim() !== '';
  const names =
    options.names.length > 0
      ? options.names
      : ['inprocess', 'sqlite-drivers', 'stdio', 'http', 'accelerators', 'storage-accelerators'];
  const before = [];
  const after = [];
  const compared = [];
  for (const name of names) {
    const runs = { before: [], after: [] };
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      for (const which of order) {
        console.error(`bench:compare: ${name}, round ${round + 1}, ${which}…`);
        const output = await runBenchmark(
          which === 'before' ? baseline.folder : root,
          name,
          options.quick,
          options.rows,
        );
        if (output !== undefined) runs[which].push(output);
      }
    }
    if (runs.before.length === 0 || runs.after.length === 0) {
      console.error(`bench:compare: ${name} is not in both builds; left out`);
      continue;
    }
    before.push(runs.before);
    after.push(runs.after);
    compared.push(name);
  }
  const rows = compared.flatMap((_, i) => compare(before[i], after[i]));
  const text = render(rows, { ...options, ...baseline, names: compared, head, dirty });
  process.stdout.write(text);
  if (options.out) writeFileSync(options.out, text);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`bench:compare: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
