/**
 * The Markdown folder, both ways: `engram export --format markdown` writes one file per
 * live entry at `group/slug.md` (front matter holding the description, then the body
 * byte for byte) and a README.md index; `engram import --from markdown` reads such a
 * folder back. Exported and imported into an empty memory, it gives the same entries.
 */

import type { Policy } from '../../memory/model/policy.js';
import { normalizeNewlines, utf8Bytes } from '../../memory/model/text.js';
import type { StoredEntry } from '../../memory/port.js';
import { firstHeadingOrLineSteps } from './first-line.js';
import { frontMatterSteps, withFrontMatter } from './front-matter.js';
import { badSource, type ImportFile, type ImportPlan, PlanBuilder, type PlanOptions, textOf } from './plan.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

/** The first line of the index file: how a later export knows the folder is one of its own. */
export const MARKDOWN_INDEX_TITLE = '# Engram memory export';
export const MARKDOWN_INDEX = 'README.md';

export interface MarkdownFile {
  readonly path: string;
  readonly text: string;
}

type ExportedEntry = Pick<StoredEntry, 'name' | 'description' | 'body'>;

/** The files of a Markdown export, in name order: each entry, then the README.md index. */
export function markdownExport(entries: readonly ExportedEntry[]): MarkdownFile[] {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files = sorted.map((entry) => ({
    path: `${entry.name}.md`,
    text: withFrontMatter(entry.description, entry.body),
  }));
  const lines = sorted.map(
    (entry) => `- [${entry.name}](${entry.name}.md) (${utf8Bytes(entry.body)} bytes): ${entry.description}`,
  );
  const index = [
    MARKDOWN_INDEX_TITLE,
    '',
    `${sorted.length} entries, one file each at group/slug.md: a front matter holding the description, then the body.`,
    'Bring them back with `engram import --from markdown DIR`.',
    '',
    ...lines,
    '',
  ].join('\n');
  return [...files, { path: MARKDOWN_INDEX, text: index }];
}

/** Reads a Markdown folder (files by their paths under it) into an import plan, a step at a time. */
export function* markdownSteps(files: readonly ImportFile[], policy: Policy, options: PlanOptions): Steps<ImportPlan> {
  const isEntry = (path: string) => {
    const parts = path.split('/');
    return parts.length === 2 && (parts[1]?.toLowerCase().endsWith('.md') ?? false);
  };
  const entries = files.filter((file) => isEntry(file.path));
  const ignored = files.filter((file) => !isEntry(file.path)).map((file) => file.path);
  if (entries.length === 0) {
    throw badSource(
      `no group/slug.md file found${ignored.length > 0 ? ` (only ${ignored.slice(0, 3).join(', ')}${ignored.length > 3 ? ', …' : ''})` : ''}`,
    );
  }
  // Drafted one at a time as the plan takes them: a folder of more files than the entry cap is refused at the first one over it.
  const builder = new PlanBuilder('markdown', policy, options);
  for (const file of entries) {
    const [group = '', fileName = ''] = file.path.split('/');
    const read = yield* frontMatterSteps(normalizeNewlines(textOf(file)));
    if (typeof read === 'string') throw badSource(`${file.path}: ${read}`);
    const notes: string[] = [];
    let description = read.description ?? '';
    if (!description.trim()) {
      description = (yield* firstHeadingOrLineSteps(read.body)) ?? '';
      notes.push('no description in its front matter: took its first heading or line');
    }
    yield* builder.add({
      source: file.path,
      group,
      slug: fileName.slice(0, -'.md'.length),
      description,
      body: read.body,
      notes,
    });
    yield;
  }
  let reported = 0;
  for (const path of ignored) {
    if (++reported % STEP_UNITS === 0) yield;
    builder.leaveOut({
      source: path,
      names: [],
      notes: [path === MARKDOWN_INDEX ? 'the index of an export: not an entry' : 'not at group/slug.md: left out'],
      problem: 'not-an-entry',
    });
  }
  return builder.plan();
}

export function parseMarkdown(files: readonly ImportFile[], policy: Policy, options: PlanOptions = {}): ImportPlan {
  return runWhole(markdownSteps(files, policy, options));
}
