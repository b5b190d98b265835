/**
 * ChatGPT's saved memories, as the text of its "Manage memories" list copied into a file:
 * one memory a line (list bullets and blank lines dropped). They become the lines of one
 * entry the user names (`--name`, default topics/chatgpt-memories), split into `-2`, `-3`
 * entries with --split when they outgrow the entry cap; a line given again is kept once,
 * and reported once with how many times it repeats (a paste of one line a million times
 * is one item of the report, not a million). Memories past the user cap (userCap) are
 * refused as soon as they pass it: no import of them could succeed.
 */

import type { Policy } from '../../memory/model/policy.js';
import { utf8Bytes } from '../../memory/model/text.js';
import type { BridgeOptions } from './index.js';
import { eachLine } from './lines.js';
import { badSource, type ImportFile, type ImportPlan, overUserCap, PlanBuilder, textOf } from './plan.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

const DEFAULT_NAME = 'topics/chatgpt-memories';
const BULLET = /^\s*(?:[-*•·]|\d+[.)])\s+/;

/** A memory given again: the line it is first on, the first line that repeats it, and how many do. */
interface Repeated {
  readonly line: number;
  readonly firstRepeat: number;
  repeats: number;
}

/** Parts the set of memories is kept in: a Map grows by rehashing all it holds in one stretch, each part a 64th of them. */
const PARTS = 64;

/** The part of a memory: a few of its characters, sampled (never all of a long line). */
function partOf(text: string): number {
  let hash = text.length;
  for (let at = text.length - 1; at >= 0; at -= 1 + (at >> 3)) hash = (hash * 31 + text.charCodeAt(at)) | 0;
  return hash & (PARTS - 1);
}

export function* chatgptSteps(files: readonly ImportFile[], policy: Policy, options: BridgeOptions): Steps<ImportPlan> {
  // Each memory by the line it is first on (a number, not an object: a paste may hold millions).
  const seen = Array.from({ length: PARTS }, () => new Map<string, number>());
  // The memories given again, in the order their first repeat comes: one report item each.
  const repeated = new Map<string, Repeated>();
  // The body, a memory a line in the order they come, and its size.
  let body = '';
  let bytes = 0;
  let count = 0;
  for (const file of files) {
    // Lines end at `\n`, `\r\n` or `\r`, all found in one scan: a paste with `\r` ends is as many lines, and steps.
    yield* eachLine(
      textOf(file),
      (raw, line) => {
        const text = raw.replace(BULLET, '').trim();
        if (!text) return true;
        const part = seen[partOf(text)] as Map<string, number>;
        const first = part.get(text);
        if (first === undefined) {
          part.set(text, line);
          body += `${text}\n`;
          count++;
          // Past the user cap, no import of this body can succeed: what is kept stays within it.
          bytes += utf8Bytes(text) + 1;
          if (bytes > policy.userCap) throw overUserCap(policy);
          return true;
        }
        const again = repeated.get(text);
        if (again) again.repeats++;
        else repeated.set(text, { line: first, firstRepeat: line, repeats: 1 });
        return true;
      },
      { carriageReturns: true },
    );
  }
  if (count === 0) throw badSource('the file holds no memory (one a line)');
  const name = options.name ?? DEFAULT_NAME;
  const slash = name.indexOf('/');
  const builder = new PlanBuilder('chatgpt', policy, options);
  yield* builder.add({
    source: `${count} memories`,
    group: slash < 0 ? 'topics' : name.slice(0, slash),
    slug: slash < 0 ? name : name.slice(slash + 1),
    description: `What ChatGPT remembered about the user (${count} memories)`,
    body,
  });
  let reported = 0;
  for (const { line, repeats, firstRepeat } of repeated.values()) {
    // As many memories may repeat as there are: one step every few thousand, as when they were read.
    if (++reported % STEP_UNITS === 0) yield;
    const more = repeats > 1 ? `, and ${(repeats - 1).toLocaleString('en-US')} more lines after it` : '';
    builder.leaveOut({
      source: `line ${firstRepeat}`,
      names: [],
      notes: [`the same memory as line ${line}${more}: kept once`],
      problem: 'duplicate',
    });
  }
  return builder.plan();
}

export function parseChatgpt(files: readonly ImportFile[], policy: Policy, options: BridgeOptions = {}): ImportPlan {
  return runWhole(chatgptSteps(files, policy, options));
}
