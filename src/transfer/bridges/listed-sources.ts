/**
 * How a refusal names the items of an import over the entry cap, for every door's wording
 * (run.ts, cli/wording.ts, http/api/wording.ts). A module of its own, so that the CLI's
 * wording, which every command loads to report a failure, loads no bridge: `engram stdio`
 * answers a client's opening with the least code loaded (cli/stdio-program.ts).
 */

import { formatCount } from '../../memory/model/text.js';

/** The items over the cap a refusal names: those listed, and how many more there are. */
export function listedSources({
  sources,
  count,
}: {
  readonly sources: readonly string[];
  readonly count: number;
}): string {
  const more = count > sources.length ? ` and ${formatCount(count - sources.length)} more` : '';
  return `${sources.join(', ')}${more}`;
}
