/**
 * The systemd unit docs/operations.md gives people to copy: systemd reads it without a
 * complaint (`systemd-analyze verify`), and its ExecStart and Environment, run as written
 * (the paths moved into a temporary folder, a free port added), serve a ready memory, take
 * the first scheduled backup at once, tell /metrics when it was, log JSON lines, and stop
 * with exit code 0 on SIGTERM, as systemctl stop sends it. (No systemd runs the unit here:
 * these machines have no systemd as PID 1; its hardening options are checked by systemd's
 * own parser.)
 */

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { childEnv, ENGRAM_CLI, tempDir } from '../helpers/engram.js';
import { stopGroup } from '../helpers/process-group.js';

const OPERATIONS = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

/** The unit's text: the first ```ini block of the section on systemd. */
function documentedUnit(): string {
  const section = OPERATIONS.split('## Running it as a systemd service')[1];
  const unit = section === undefined ? undefined : /```ini\n([\s\S]*?)```/.exec(section)?.[1];
  if (unit === undefined)
    throw new Error('docs/operations.md has no ```ini unit under "Running it as a systemd service"');
  return unit;
}

/** The values of one key of the [Service] section, in order. */
function serviceValues(unit: string, key: string): string[] {
  return unit
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

const systemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('the systemd unit in docs/operations.md', () => {
  it.skipIf(!systemdAnalyze)('is read by systemd without a warning', () => {
    const dir = tempDir();
    // verify checks that ExecStart's program exists and may be run: the one this checkout built.
    const unit = documentedUnit().replace('ExecStart=/usr/bin/engram ', `ExecStart=${process.execPath} ${ENGRAM_CLI} `);
    const path = join(dir.path, 'engram.service');
    writeFileSync(path, unit);
    const result = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('runs as written: ready, a backup taken at once and shown by /metrics, JSON logs, exit 0 on SIGTERM', async () => {
    const unit = documentedUnit();
    const dir = tempDir();
    const state = dir.file('state');
    execFileSync('mkdir', ['-p', state]);
    const config = dir.file('config.json');
    writeFileSync(config, '{}');
    const moved = (word: string) => word.replace('/var/lib/engram', state).replace('/etc/engram/config.json', config);
    const [execStart] = serviceValues(unit, 'ExecStart');
    const [program, ...args] = execStart!.split(' ');
    expect(program).toBe('/usr/bin/engram');
    const variables = Object.fromEntries(
      serviceValues(unit, 'Environment').map((assignment) => {
        const [name, value] = assignment.split('=', 2) as [string, string];
        return [name, moved(value)];
      }),
    );
    expect(variables).toEqual({ ENGRAM_DB: join(state, 'memory.db') });

    const child = spawn(process.execPath, [ENGRAM_CLI, ...args.map(moved), '--port', '0', '--json'], {
      env: childEnv(dir.path, variables),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    onTestFinished(async () => {
      await stopGroup(child, 'SIGKILL');
      await exited;
    });
    const origin = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const url = line.startsWith('{') ? (JSON.parse(line) as { url?: string }).url : undefined;
        if (url) resolve(new URL(url).origin);
      });
      exited.then((code) => reject(new Error(`engram serve exited with ${code}:\n${stderr}`)));
    });

    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    const backups = join(state, 'backups');
    const metric = await vi.waitFor(
      async () => {
        const text = await (await fetch(`${origin}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('engram_backup_last_success_timestamp_seconds '));
        if (line === undefined) throw new Error('no backup yet');
        return Number(line.split(' ')[1]);
      },
      { timeout: 60_000, interval: 200 },
    );
    const taken = readdirSync(backups).filter((name) => /^engram-.*\.db$/.test(name));
    expect(taken).toHaveLength(1);
    expect(metric * 1000).toBeLessThanOrEqual(Date.now());

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
