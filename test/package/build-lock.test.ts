/**
 * One `npm run build` at a time in a checkout (scripts/build-lock.mjs): a second build
 * while one runs stops at once, saying which process holds the lock, and touches neither
 * the build folder nor the lock; a lock left by a killed build is taken over, by one build
 * only when two find it; a build that fails leaves no lock. Run on a copy of the build
 * scripts in a folder of its own, where the build's first step (tsc) fails at once.
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it, onTestFinished } from 'vitest';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const LOCK = 'dist.building.lock';

/** A checkout holding only the build scripts. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-lock-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  for (const script of ['build.mjs', 'build-lock.mjs', 'swap-dist.mjs']) {
    copyFileSync(join(SCRIPTS, script), join(root, 'scripts', script));
  }
  return root;
}

/** A process that takes the lock of `root` as a build does and holds it; it prints what came of it. */
function lockHolder(root: string): { child: ChildProcess; outcome: Promise<string> } {
  const lockModule = pathToFileURL(join(root, 'scripts', 'build-lock.mjs')).href;
  const program = `
    import { takeBuildLock } from ${JSON.stringify(lockModule)};
    try { takeBuildLock(${JSON.stringify(root)}); console.log('locked'); setInterval(() => {}, 1000); }
    catch (error) { console.log(error.message); }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const outcome = new Promise<string>((resolve) => child.stdout?.once('data', (data) => resolve(String(data).trim())));
  return { child, outcome };
}

/** Kills `child` as a build killed by the person (kill -9), leaving its lock behind. */
async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Runs `npm run build` (scripts/build.mjs) in `root`: its exit code and error output. */
function build(root: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root }, (error, _stdout, stderr) => {
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? 1 : 0, stderr });
    });
  });
}

it('refuses a second build while one runs, naming its process, and leaves its build folder and lock alone', async () => {
  const root = checkout();
  const first = lockHolder(root);
  expect(await first.outcome).toBe('locked');
  mkdirSync(join(root, 'dist.building'));
  writeFileSync(join(root, 'dist.building', 'half-built.js'), '');
  const lockBefore = readFileSync(join(root, LOCK), 'utf8');

  const second = await build(root);

  expect(second.code).toBe(1);
  expect(second.stderr).toContain(`another build is running in this checkout (process ${first.child.pid}, since `);
  expect(second.stderr).toContain(
    `wait for it to end, then run it again. If no build is running, remove ${join(root, LOCK)}.`,
  );
  expect(existsSync(join(root, 'dist.building', 'half-built.js'))).toBe(true);
  expect(readFileSync(join(root, LOCK), 'utf8')).toBe(lockBefore);
});

it('takes over the lock of a killed build, and a build that fails gives its lock back', async () => {
  const root = checkout();
  const killedBuild = lockHolder(root);
  expect(await killedBuild.outcome).toBe('locked');
  await killed(killedBuild.child);
  expect(existsSync(join(root, LOCK))).toBe(true);

  const next = await build(root);

  expect(next.stderr).not.toContain('another build is running');
  expect(next.stderr).toContain('failed; dist/ is left as it was.');
  expect(existsSync(join(root, LOCK))).toBe(false);
  expect(existsSync(join(root, 'dist.building'))).toBe(false);
});

it("lets one build only take over a killed build's lock when two find it at once", async () => {
  const root = checkout();
  const killedBuild = lockHolder(root);
  expect(await killedBuild.outcome).toBe('locked');
  await killed(killedBuild.child);

  const [one, two] = [lockHolder(root), lockHolder(root)];
  const outcomes = await Promise.all([one.outcome, two.outcome]);

  expect(outcomes.filter((outcome) => outcome === 'locked')).toHaveLength(1);
  expect(outcomes.find((outcome) => outcome !== 'locked')).toContain('another build is running in this checkout');
  const holder = JSON.parse(readFileSync(join(root, LOCK), 'utf8')).pid;
  expect(holder).toBe(outcomes[0] === 'locked' ? one.child.pid : two.child.pid);
});
