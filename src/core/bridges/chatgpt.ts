/**
 * ChatGPT's saved memories, as the text of its "Manage memories" list copied into a file:
 * one memory a line (list bullets and blank lines dropped). They become the lines of one
 * entry the user names (`--name`, default topics/chatgpt-memories), split into `-2`, `-3`
 * entries with --split when they outgrow the entry cap; a line given again is kept once,
 * and reported once with how many times it repeats (a paste of one line a million times
 * is one item of the report, not a million). Memories past the user cap (userCap) are
 * refused as soon as they pass it: no import of them could succeed.
 */

import { checkUserCap } from '../edit.js';
import type { Policy } from '../policy.js';
import { utf8Bytes } from '../text.js';
import type { BridgeOptions } from './index.js';
import { badSource, type ImportFile, type ImportPlan, PlanBuilder, textOf } from './plan.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

const DEFAULT_NAME = 'topics/chatgpt-memories';
const BULLET = /^\s*(?:[-*•·]|\d+[.)])\s+/;

/** A memory of the list: the line it is first on, and the lines that give it again. */
interface Memory {
  readonly line: number;
  repeats: number;
  firstRepeat: number;
}

/** The lines of `text`, numbered from 1, ending at `\n`, `\r\n` or `\r`, read one at a time (a step every few thousand). */
function* linesOf(text: string, each: (line: string, number: number) => void): Steps<void> {
  let number = 0;
  let read = 0;
  for (let start = 0; start <= text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    start = end + 1;
    for (const part of line.includes('\r') ? line.replace(/\r$/, '').split('\r') : [line]) each(part, ++number);
    if (++read % STEP_UNITS === 0) yield;
  }
}

export function* chatgptSteps(files: readonly ImportFile[], policy: Policy, options: BridgeOptions): Steps<ImportPlan> {
  const seen = new Map<string, Memory>();
  // The memories given again, in the order their first repeat comes: one report item each.
  const repeated: Memory[] = [];
  let bytes = 0;
  for (const file of files) {
    yield* linesOf(textOf(file), (raw, line) => {
      const text = raw.replace(BULLET, '').trim();
      if (!text) return;
      const memory = seen.get(text);
      if (memory === undefined) {
        seen.set(text, { line, repeats: 0, firstRepeat: 0 });
        // The memories become one body: past the user cap, no import of it can succeed; what is kept stays within it.
        bytes += utf8Bytes(text) + 1;
        if (bytes > policy.userCap) checkUserCap('the import', bytes, policy);
      } else if (memory.repeats++ === 0) {
        memory.firstRepeat = line;
        repeated.push(memory);
      }
    });
  }
  if (seen.size === 0) throw badSource('the file holds no memory (one a line)');
  const name = options.name ?? DEFAULT_NAME;
  const slash = name.indexOf('/');
  let body = '';
  let joined = 0;
  for (const memory of seen.keys()) {
    body += `${memory}\n`;
    if (++joined % STEP_UNITS === 0) yield;
  }
  const builder = new PlanBuilder('chatgpt', policy, options);
  yield* builder.add({
    source: `${seen.size} memories`,
    group: slash < 0 ? 'topics' : name.slice(0, slash),
    slug: slash < 0 ? name : name.slice(slash + 1),
    description: `What ChatGPT remembered about the user (${seen.size} memories)`,
    body,
  });
  for (const { line, repeats, firstRepeat } of repeated) {
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
