/**
 * Claude Code's auto memory: a project's `~/.claude/projects/<project>/memory/` folder,
 * a MEMORY.md index (the lines Claude Code loads into each session, linking topic files)
 * and the topic files beside it (`debugging.md`, …, some with front matter holding
 * `description:` and `type:`). MEMORY.md becomes one entry (topics/claude-code-memory, or
 * the name given); each topic file an entry of its own, in areas when its type is
 * `project`, else in topics, described by its front matter, else by the text of its link
 * in MEMORY.md, else by its first heading or line. Links to missing files are reported.
 * A MEMORY.md larger than all one memory may hold (userCap) is refused before its links
 * are read: no import of it could succeed.
 */

import type { Policy } from '../../memory/model/policy.js';
import { normalizeNewlines } from '../../memory/model/text.js';
import { firstHeadingOrLineSteps } from './first-line.js';
import { frontMatterSteps } from './front-matter.js';
import type { BridgeOptions } from './index.js';
import { eachLine } from './lines.js';
import { badSource, excerpt, type ImportFile, type ImportPlan, overUserCap, PlanBuilder, textOf } from './plan.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

export const CLAUDE_CODE_INDEX = 'MEMORY.md';
const DEFAULT_NAME = 'topics/claude-code-memory';
/** Characters of a line read to describe a file it links: far more than a description keeps. */
const DESCRIBING_CHARS = 4096;

/** A link's target as a path: %-escapes decoded, unless they are not valid escapes (then as written). */
function targetPath(raw: string): string {
  try {
    return decodeURI(raw).replace(/^\.\//, '');
  } catch {
    return raw.replace(/^\.\//, '');
  }
}

/** `[text](target.md)` links of the index: the file each names, and what the line says of it. */
function* links(index: string): Steps<Map<string, string>> {
  const found = new Map<string, string>();
  // Line by line, never split whole: a MEMORY.md of millions of lines is read a step at a time.
  yield* eachLine(index, (line) => {
    // Neither part runs over a `[`: a line of a million `[` or `[](` is read in one pass, not one per `[`.
    for (const match of line.matchAll(/\[([^[\]]*)\]\(<?([^()[\]\s<>]+\.md)>?\)/g)) {
      const target = targetPath(match[2] ?? '');
      const start = (match.index ?? 0) + match[0].length;
      // Read no further than a description can use: a long line of links costs each link a few KB, not the line.
      const after = line
        .slice(start, start + DESCRIBING_CHARS)
        .replace(/^\s*[—–:-]\s*/, '')
        .trim();
      if (!found.has(target)) found.set(target, after || (match[1] ?? '').slice(0, DESCRIBING_CHARS).trim());
    }
    return true;
  });
  return found;
}

function splitName(name: string): { group: string; slug: string } {
  const slash = name.indexOf('/');
  return slash < 0 ? { group: 'topics', slug: name } : { group: name.slice(0, slash), slug: name.slice(slash + 1) };
}

export function* claudeCodeSteps(
  files: readonly ImportFile[],
  policy: Policy,
  options: BridgeOptions,
): Steps<ImportPlan> {
  const indexFile = files.find((file) => file.path === CLAUDE_CODE_INDEX);
  if (!indexFile) throw badSource(`no ${CLAUDE_CODE_INDEX} in the folder: name a Claude Code memory folder (…/memory)`);
  const index = normalizeNewlines(textOf(indexFile));
  // More characters than all one memory may hold in bytes: no import of it could succeed, and its links
  // (each kept until the folder is checked for it) stay as few as a MEMORY.md that could be imported holds.
  if (index.length > policy.userCap) throw overUserCap(policy);
  const linked = yield* links(index);
  const builder = new PlanBuilder('claude-code', policy, options);
  yield* builder.add({
    source: CLAUDE_CODE_INDEX,
    ...splitName(options.name ?? DEFAULT_NAME),
    description: (yield* firstHeadingOrLineSteps(index)) ?? 'Claude Code memory index',
    body: index,
  });
  // Files that are not topic files are reported after the entries, as links to missing files are.
  const notTopics: string[] = [];
  for (const file of files) {
    if (file === indexFile) continue;
    if (file.path.includes('/') || !file.path.endsWith('.md')) {
      notTopics.push(file.path);
      continue;
    }
    const text = normalizeNewlines(textOf(file));
    const read = yield* frontMatterSteps(text);
    if (typeof read === 'string') throw badSource(`${file.path}: ${read}`);
    const notes = linked.has(file.path) ? [] : ['not linked from MEMORY.md'];
    const described = read.description?.trim() || linked.get(file.path) || (yield* firstHeadingOrLineSteps(read.body));
    yield* builder.add({
      source: file.path,
      group: read.type === 'project' ? 'areas' : 'topics',
      slug: file.path.slice(0, -'.md'.length),
      description: described ?? file.path.slice(0, -'.md'.length),
      body: read.body,
      notes,
    });
    yield;
  }
  // As many may be left out as the folder has files, or MEMORY.md links: a step every few thousand.
  let reported = 0;
  for (const path of notTopics) {
    if (++reported % STEP_UNITS === 0) yield;
    builder.leaveOut({
      source: path,
      names: [],
      notes: ['not a topic file (a .md beside MEMORY.md): left out'],
      problem: 'not-an-entry',
    });
  }
  const present = new Set(files.map((file) => file.path));
  for (const target of linked.keys()) {
    if (++reported % STEP_UNITS === 0) yield;
    if (!present.has(target)) {
      builder.leaveOut({
        source: excerpt(target),
        names: [],
        notes: ['linked from MEMORY.md but not in the folder'],
        problem: 'not-an-entry',
      });
    }
  }
  return builder.plan();
}

export function parseClaudeCode(files: readonly ImportFile[], policy: Policy, options: BridgeOptions = {}): ImportPlan {
  return runWhole(claudeCodeSteps(files, policy, options));
}
