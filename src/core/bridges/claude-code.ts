/**
 * Claude Code's auto memory: a project's `~/.claude/projects/<project>/memory/` folder,
 * a MEMORY.md index (the lines Claude Code loads into each session, linking topic files)
 * and the topic files beside it (`debugging.md`, …, some with front matter holding
 * `description:` and `type:`). MEMORY.md becomes one entry (topics/claude-code-memory, or
 * the name given); each topic file an entry of its own, in areas when its type is
 * `project`, else in topics, described by its front matter, else by the text of its link
 * in MEMORY.md, else by its first heading or line. Links to missing files are reported.
 */

import type { Policy } from '../policy.js';
import { normalizeNewlines } from '../text.js';
import { firstHeadingOrLine } from './first-line.js';
import { readFrontMatter } from './front-matter.js';
import type { BridgeOptions } from './index.js';
import { badSource, buildPlan, type Draft, type ImportFile, type ImportPlan, type PlanItem, textOf } from './plan.js';

export const CLAUDE_CODE_INDEX = 'MEMORY.md';
const DEFAULT_NAME = 'topics/claude-code-memory';

/** `[text](target.md)` links of the index: the file each names, and what the line says of it. */
function links(index: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of index.split('\n')) {
    for (const match of line.matchAll(/\[([^\]]*)\]\(<?([^)\s>]+\.md)>?\)/g)) {
      const target = decodeURI(match[2] ?? '').replace(/^\.\//, '');
      const after = line
        .slice((match.index ?? 0) + match[0].length)
        .replace(/^\s*[—–:-]\s*/, '')
        .trim();
      if (!found.has(target)) found.set(target, after || (match[1] ?? '').trim());
    }
  }
  return found;
}

/** `type:` of a front matter, if there is one (Claude Code writes user, feedback, project, reference). */
function typeOf(text: string): string | undefined {
  const fence = /^---\n([\s\S]*?)\n---\n/.exec(text);
  return fence?.[1] ? /^type\s*:\s*["']?([\w-]+)/m.exec(fence[1])?.[1]?.toLowerCase() : undefined;
}

function splitName(name: string): { group: string; slug: string } {
  const slash = name.indexOf('/');
  return slash < 0 ? { group: 'topics', slug: name } : { group: name.slice(0, slash), slug: name.slice(slash + 1) };
}

export function parseClaudeCode(files: readonly ImportFile[], policy: Policy, options: BridgeOptions = {}): ImportPlan {
  const indexFile = files.find((file) => file.path === CLAUDE_CODE_INDEX);
  if (!indexFile) throw badSource(`no ${CLAUDE_CODE_INDEX} in the folder: name a Claude Code memory folder (…/memory)`);
  const index = normalizeNewlines(textOf(indexFile));
  const linked = links(index);
  const drafts: Draft[] = [
    {
      source: CLAUDE_CODE_INDEX,
      ...splitName(options.name ?? DEFAULT_NAME),
      description: firstHeadingOrLine(index) ?? 'Claude Code memory index',
      body: index,
    },
  ];
  const leftOut: PlanItem[] = [];
  for (const file of files) {
    if (file === indexFile) continue;
    if (file.path.includes('/') || !file.path.endsWith('.md')) {
      leftOut.push({
        source: file.path,
        names: [],
        notes: ['not a topic file (a .md beside MEMORY.md): left out'],
        problem: 'not-an-entry',
      });
      continue;
    }
    const text = normalizeNewlines(textOf(file));
    const read = readFrontMatter(text);
    if (typeof read === 'string') throw badSource(`${file.path}: ${read}`);
    const notes = linked.has(file.path) ? [] : ['not linked from MEMORY.md'];
    const described = read.description?.trim() || linked.get(file.path) || firstHeadingOrLine(read.body);
    drafts.push({
      source: file.path,
      group: typeOf(text) === 'project' ? 'areas' : 'topics',
      slug: file.path.slice(0, -'.md'.length),
      description: described ?? file.path.slice(0, -'.md'.length),
      body: read.body,
      notes,
    });
  }
  const present = new Set(files.map((file) => file.path));
  for (const target of linked.keys()) {
    if (!present.has(target)) {
      leftOut.push({
        source: target,
        names: [],
        notes: ['linked from MEMORY.md but not in the folder'],
        problem: 'not-an-entry',
      });
    }
  }
  const plan = buildPlan('claude-code', drafts, policy, options);
  return { ...plan, items: [...plan.items, ...leftOut] };
}
