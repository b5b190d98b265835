/**
 * `engram review list | show | approve | reject`: the changes a review-mode token or app
 * proposed (memory/review.ts), for the person to approve or reject. Each is shown with the
 * diff against the entry as it is now, and whether approving would still apply it.
 */

import type { Command } from 'commander';
import { indexLine } from '../memory/model/format.js';
import { utf8Bytes } from '../memory/model/text.js';
import type { ProposalRecord } from '../memory/port.js';
import type { ProposalView } from '../memory/review.js';
import { type CommonOptions, cliCaller } from './context.js';
import type { Run } from './entries.js';

const time = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

/** What the proposal asks, in a few words. */
function asked(proposal: ProposalRecord): string {
  return proposal.operation === 'drop' ? `drop ${proposal.name}` : `${proposal.operation} ${proposal.name}`;
}

/** One proposal's heading: its id, what, who, when, and whether it applies now. */
function heading(view: ProposalView): string {
  const { proposal } = view;
  const state = view.applies ? 'applies to the entry as it is now' : `CONFLICT: ${view.why}`;
  return (
    `${proposal.id}  ${asked(proposal)}  by ${proposal.actor}, ${time(proposal.at)}; expires ${time(view.expires)}\n` +
    `  ${state}`
  );
}

/** A proposal for --json: the record, its expiry, whether it applies (and why not), the diff. */
function viewJson(view: ProposalView) {
  return {
    ...view.proposal,
    expires: view.expires,
    applies: view.applies,
    why: view.why ?? null,
    revision: view.current?.revision ?? null,
    diff: view.patch,
  };
}

function shown(view: ProposalView): string {
  const diff =
    view.patch ??
    `(too different to show line by line; the proposed text has ${utf8Bytes(view.after.body)} bytes: ` +
      `engram review show ${view.proposal.id} --json holds it)`;
  return `${heading(view)}\n\n${diff.trimEnd()}`;
}

export function registerReviewCommands(program: Command, common: (command: Command) => Command, run: Run): void {
  const review = program
    .command('review')
    .description(
      'Approve or reject the changes held for your review: those of tokens and apps in review mode ' +
        '(engram token create --review, the consent page, engram stdio --review)',
    );

  common(review.command('list'))
    .description('List the changes waiting for review, oldest first, each with whether it still applies')
    .action((options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const views = await context.memory.review.list(cliCaller(context));
          output.result(
            views.length === 0 ? 'No changes are waiting for review.' : views.map(heading).join('\n'),
            views.map(viewJson),
          );
        },
        'reads',
      ),
    );

  common(review.command('show'))
    .description('Show one waiting change with the diff against the entry as it is now')
    .argument('<id>', 'the id engram review list shows')
    .action((id: string, options: CommonOptions) =>
      run(
        options,
        async (context, output) => {
          const view = await context.memory.review.show(cliCaller(context), id.trim());
          output.result(shown(view), { ...viewJson(view), after: view.after });
        },
        'reads',
      ),
    );

  common(review.command('approve'))
    .description(
      'Apply a waiting change to the entry as it is now (refused, changing nothing, when it no longer applies ' +
        'or would exceed a cap); history names the app and you',
    )
    .argument('<id>', 'the id engram review list shows')
    .action((id: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        const { proposal, entry } = await context.memory.review.approve(cliCaller(context), id.trim());
        const what = entry ? indexLine(entry) : `dropped ${proposal.name} (engram undrop brings it back)`;
        output.result(`Approved ${proposal.id} by ${proposal.actor}: ${what}`, {
          approved: proposal.id,
          entry: entry ?? null,
        });
      }),
    );

  common(review.command('reject'))
    .description('Discard a waiting change; no entry changes')
    .argument('<id>', 'the id engram review list shows')
    .action((id: string, options: CommonOptions) =>
      run(options, async (context, output) => {
        const proposal = await context.memory.review.reject(cliCaller(context), id.trim());
        output.result(`Rejected ${proposal.id} (${asked(proposal)} by ${proposal.actor}).`, {
          rejected: proposal.id,
        });
      }),
    );
}
