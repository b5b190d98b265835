/**
 * An Anthropic memory-tool folder: the `/memories` directory a model keeps through the
 * memory tool (memory_20250818; on disk, e.g. BetaLocalFilesystemMemoryTool's
 * `<base>/memories`). Each file is an entry: a first folder that is one of the memory's
 * groups is its group (else topics), the rest of its path, without a .md or .txt ending,
 * its slug (folders joined by -); its first heading or first line its description.
 */

import type { Policy } from '../../memory/model/policy.js';
import { firstHeadingOrLineSteps } from './first-line.js';
import { type ImportFile, type ImportPlan, PlanBuilder, type PlanOptions, textOf } from './plan.js';
import { runWhole, type Steps } from './steps.js';

const OTHER_GROUP = 'topics';
const TEXT_ENDING = /\.(md|markdown|txt)$/i;

export function* anthropicMemorySteps(
  files: readonly ImportFile[],
  policy: Policy,
  options: PlanOptions,
): Steps<ImportPlan> {
  // Named the folder above /memories (the helper's base path): read what is under memories/.
  const underMemories = files.every((file) => file.path.startsWith('memories/'));
  // Drafted one at a time as the plan takes them: a folder of more files than the entry cap is refused at the first one over it.
  const builder = new PlanBuilder('anthropic-memory', policy, options);
  for (const file of files) {
    const path = underMemories ? file.path.slice('memories/'.length) : file.path;
    const text = textOf(file);
    const parts = path.replace(TEXT_ENDING, '').split('/');
    const first = parts[0]?.toLowerCase() ?? '';
    const inGroup = parts.length > 1 && Object.hasOwn(policy.groups, first);
    const slugParts = inGroup ? parts.slice(1) : parts;
    const description = yield* firstHeadingOrLineSteps(text);
    yield* builder.add({
      source: file.path,
      group: inGroup ? first : OTHER_GROUP,
      slug: slugParts.join('-'),
      description: description ?? slugParts.join(' '),
      body: text,
      notes: description === undefined ? ['the file is empty: described by its name'] : [],
    });
    yield;
  }
  return builder.plan();
}

export function parseAnthropicMemory(
  files: readonly ImportFile[],
  policy: Policy,
  options: PlanOptions = {},
): ImportPlan {
  return runWhole(anthropicMemorySteps(files, policy, options));
}
