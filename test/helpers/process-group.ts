/**
 * Children that start children of their own (`npm start` runs sh, which runs node) are
 * spawned as the leader of a new process group, so that a test stops the whole group and
 * waits until no member is left: stopping only the leader left an `engram serve`
 * listening after every run of the suite.
 */

import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether a process of the group still runs (zombies, already dead, do not count). */
function groupAlive(pgid: number): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    // No /proc (not Linux): the group exists as long as the kernel can signal it.
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return pids.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "pid (command) ": state, parent pid, process group.
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return state !== 'Z' && Number(group) === pgid;
    } catch {
      return false;
    }
  });
}

/** Sends `signal` to the group `child` leads (spawned with `detached: true`) and waits until every member has exited. */
export async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
  while (groupAlive(pgid)) await sleep(10);
}
