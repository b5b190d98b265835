/**
 * ChatGPT's saved memories, as the text of its "Manage memories" list copied into a file:
 * one memory a line (list bullets and blank lines dropped). They become the lines of one
 * entry the user names (`--name`, default topics/chatgpt-memories), split into `-2`, `-3`
 * entries with --split when they outgrow the entry cap; a line given twice is reported
 * and kept once.
 */

import type { Policy } from '../policy.js';
import { normalizeNewlines } from '../text.js';
import type { BridgeOptions } from './index.js';
import { badSource, buildPlan, type ImportFile, type ImportPlan, type PlanItem, textOf } from './plan.js';

const DEFAULT_NAME = 'topics/chatgpt-memories';
const BULLET = /^\s*(?:[-*•·]|\d+[.)])\s+/;

export function parseChatgpt(files: readonly ImportFile[], policy: Policy, options: BridgeOptions = {}): ImportPlan {
  const seen = new Map<string, number>();
  const duplicates: PlanItem[] = [];
  for (const file of files) {
    normalizeNewlines(textOf(file))
      .split('\n')
      .forEach((raw, index) => {
        const memory = raw.replace(BULLET, '').trim();
        if (!memory) return;
        const first = seen.get(memory);
        if (first === undefined) seen.set(memory, index + 1);
        else {
          duplicates.push({
            source: `line ${index + 1}`,
            names: [],
            notes: [`the same memory as line ${first}: kept once`],
            problem: 'duplicate',
          });
        }
      });
  }
  if (seen.size === 0) throw badSource('the file holds no memory (one a line)');
  const name = options.name ?? DEFAULT_NAME;
  const slash = name.indexOf('/');
  const plan = buildPlan(
    'chatgpt',
    [
      {
        source: `${seen.size} memories`,
        group: slash < 0 ? 'topics' : name.slice(0, slash),
        slug: slash < 0 ? name : name.slice(slash + 1),
        description: `What ChatGPT remembered about the user (${seen.size} memories)`,
        body: [...seen.keys()].map((memory) => `${memory}\n`).join(''),
      },
    ],
    policy,
    options,
  );
  return { ...plan, items: [...plan.items, ...duplicates] };
}
