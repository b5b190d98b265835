/** `engram stdio`: serves the memory to one local MCP client over stdin/stdout. */

import type { Command } from 'commander';
import { actorLabel } from '../memory/model/caller.js';
import { createToolHandler } from '../memory/tools/handler.js';
import { type CommonOptions, type Context, openContext, VERSION } from './context.js';
import type { Environment } from './environment.js';
import { log, logInternalError, reportFailure, UsageError } from './output.js';

interface StdioOptions extends CommonOptions {
  readonly review?: boolean;
}

export function registerStdioCommand(
  program: Command,
  common: (command: Command, output?: { readonly json: boolean }) => Command,
  environment: Environment,
): void {
  common(program.command('stdio'), { json: false })
    .description('Serve MCP over stdin/stdout (for Claude Desktop, Claude Code and other local clients)')
    .option(
      '--review',
      "hold the client's memory_write and memory_drop for your review (engram review, or the web UI's Review page) " +
        'instead of applying them',
    )
    .action(async (options: StdioOptions) => {
      let context: Context;
      try {
        if (options.json) throw new UsageError('stdio already speaks JSON (JSON-RPC on stdout): drop --json');
        // 'creates', not 'serves': no search worker. Calls come one at a time here, so a
        // catch-up batch on the loop delays at most the one call that meets it, while the
        // worker's commits, on a connection of its own, made this connection drop its page
        // cache: an open right after a write took 1.17x as long with the worker, measured side by side.
        context = await openContext(options, environment, 'creates');
      } catch (error) {
        process.exitCode = reportFailure(error, false);
        return;
      }
      // Loaded only by this command; the MCP SDK itself only once the client needs it (mcp/stdio-opening.ts).
      const { serveMcpStdio } = await import('../mcp/stdio.js');
      const handleTool = createToolHandler(context.memory, { onUnexpectedError: logInternalError });
      // One client, one connection: its tool calls are applied in the order they arrived, so
      // a read sent right after a write sees it even when the client did not wait for the
      // write's answer. Only tool calls and name completions wait; the rest of the protocol
      // is answered at once. The chain's end is also what must settle before the store closes.
      let lastCall: Promise<unknown> = Promise.resolve();
      const inOrder = <T>(work: () => Promise<T>): Promise<T> => {
        const call = lastCall.then(work);
        lastCall = call.catch(() => {});
        return call;
      };
      const handler: typeof handleTool = (caller, tool, args) => inOrder(() => handleTool(caller, tool, args));
      const names = (...args: Parameters<typeof context.memory.names>) => inOrder(() => context.memory.names(...args));
      const finishCalls = () => lastCall;
      const server = serveMcpStdio(
        {
          handler,
          onUnexpectedError: logInternalError,
          memory: { names },
          policy: context.settings.policy,
          version: VERSION,
          caller: (clientName) => ({
            user: context.user,
            label: actorLabel(clientName, 'mcp'),
            review: options.review === true,
          }),
        },
        log,
        // ENGRAM_ACCEL_STDIO_FAST_PATH=0 leaves every request to the SDK (docs/accelerators.md).
        { fastPath: environment.accelerators.stdioFastPath },
      );
      const held = options.review ? ', changes held for review' : '';
      log(`serving MCP on stdio, database ${context.database}, user ${context.user}${held}`);
      const shutdown = async () => {
        await server.close();
        await finishCalls();
        await context.close();
        process.exit(0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
      await server.closed;
      await finishCalls();
      await context.close();
    });
}
