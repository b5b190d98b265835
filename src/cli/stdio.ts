/**
 * `engram stdio`: serves the memory to one local MCP client over stdin/stdout.
 *
 * The client waits from starting Engram to its first `tools/list` (DESIGN §7): the opening
 * (mcp/stdio-opening.ts) needs the settings and the user, never the store, so the store
 * opens after it — once a request needs it, or STORE_OPEN_WAIT_MS after serving began,
 * when a client's opening has long been answered (its messages come in one burst, each
 * right after the answer before it). Every tool call and name completion waits for the
 * store, in order of arrival. What a person may have got wrong in the flags, environment or
 * config file is still refused before anything is answered; a store that cannot be
 * opened is reported on stderr as before, each request waiting for it is answered with
 * why, and the connection closes, with the exit code a failed open has always had.
 */

import type { Command } from 'commander';
import { actorLabel } from '../memory/model/caller.js';
import { isEngramError } from '../memory/model/errors.js';
import { asSentence } from '../memory/model/text.js';
import type { ToolHandler, ToolResult } from '../memory/tools/handler.js';
import {
  type CommonOptions,
  type Context,
  type ContextPlan,
  openPlannedContext,
  planContext,
  VERSION,
} from './context.js';
import type { Environment } from './environment.js';
import { log, logInternalError, reportFailure, UsageError } from './output.js';

interface StdioOptions extends CommonOptions {
  readonly review?: boolean;
}

/**
 * How long after serving began the store opens at the latest, when no request has needed
 * it yet: well after a client's opening (as the SDK waits for a quiet connection,
 * mcp/stdio-transport.ts), and soon enough that a store that cannot be opened is reported
 * at once to a person who started `engram stdio` to try it.
 */
const STORE_OPEN_WAIT_MS = 100;

/**
 * The store's failure, as every tool call waiting for it is answered: worded for the
 * model, which must not call again, with the person's message (the one stderr shows) inside.
 */
function storeFailure(error: unknown): ToolResult {
  const reason = isEngramError(error) ? error.message : (error as Error).message;
  return {
    text:
      `Engram could not open its memory, so nothing was read or changed, and it is stopping: ${asSentence(reason)} ` +
      'Tell the user; calling again will not help until they fix this.',
    isError: true,
    code: isEngramError(error) ? error.code : 'INTERNAL',
  };
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
      let plan: ContextPlan;
      try {
        if (options.json) throw new UsageError('stdio already speaks JSON (JSON-RPC on stdout): drop --json');
        // 'creates', not 'serves': no search worker. Calls come one at a time here, so a
        // catch-up batch on the loop delays at most the one call that meets it, while the
        // worker's commits, on a connection of its own, made this connection drop its page
        // cache: an open right after a write took 1.17x as long with the worker, measured side by side.
        plan = planContext(options, environment, 'creates');
      } catch (error) {
        process.exitCode = reportFailure(error, false);
        return;
      }
      // Loaded only by this command; the MCP SDK itself only once the client needs it (mcp/stdio-opening.ts).
      const { serveMcpStdio } = await import('../mcp/stdio.js');
      // One client, one connection: its tool calls are applied in the order they arrived, so
      // a read sent right after a write sees it even when the client did not wait for the
      // write's answer. Only tool calls and name completions wait (for the store first); the
      // rest of the protocol is answered at once. The chain's end is also what must settle
      // before the store closes.
      let lastCall: Promise<unknown> = Promise.resolve();
      const inOrder = <T>(work: () => Promise<T>): Promise<T> => {
        const call = lastCall.then(work);
        lastCall = call.catch(() => {});
        return call;
      };
      let opened: Promise<{ readonly context: Context; readonly handleTool: ToolHandler }> | undefined;
      /** Opens the store, once: at the first call that needs it, or STORE_OPEN_WAIT_MS after serving began. */
      const openStore = () => {
        if (opened !== undefined) return opened;
        opened = (async () => {
          // The handler's code first: a store opened, then left open by a failed import, would never be closed.
          const { createToolHandler } = await import('../memory/tools/handler.js');
          const context = await openPlannedContext(plan, environment);
          const held = options.review ? ', changes held for review' : '';
          log(`serving MCP on stdio, database ${context.database}, user ${context.user}${held}`);
          return { context, handleTool: createToolHandler(context.memory, { onUnexpectedError: logInternalError }) };
        })();
        opened.catch(async (error: unknown) => {
          process.exitCode = reportFailure(error, false);
          // The calls that waited for the store are answered with why (storeFailure) before the connection
          // closes; a request still waiting for the SDK to load, with why as an error.
          await lastCall;
          setImmediate(() => {
            void server.close(storeFailure(error).text);
            // Nothing more is read: the process ends now, as when the store was opened before serving, not once the client lets go of stdin.
            process.stdin.destroy();
          });
        });
        return opened;
      };
      const handler: ToolHandler = (caller, tool, args) =>
        inOrder(() =>
          openStore().then(
            ({ handleTool }) => handleTool(caller, tool, args),
            (error: unknown) => storeFailure(error),
          ),
        );
      const names = (...args: Parameters<Context['memory']['names']>) =>
        inOrder(() => openStore().then(({ context }) => context.memory.names(...args)));
      const server = serveMcpStdio(
        {
          handler,
          onUnexpectedError: logInternalError,
          memory: { names },
          policy: plan.settings.policy,
          version: VERSION,
          caller: (clientName) => ({
            user: plan.user,
            label: actorLabel(clientName, 'mcp'),
            review: options.review === true,
          }),
        },
        log,
        // ENGRAM_ACCEL_STDIO_FAST_PATH=0 leaves every request to the SDK (docs/accelerators.md).
        { fastPath: environment.accelerators.stdioFastPath },
      );
      const storeTimer = setTimeout(openStore, STORE_OPEN_WAIT_MS);
      let closing: Promise<void> | undefined;
      /**
       * Once the calls have settled: the store closed, if it opened, once. A connection that
       * ended opens it first, if no call did, to report a store that cannot be opened; a
       * signal to stop never opens it (only waits for an open under way, to close it).
       */
      const closeStore = (reportUnopened: boolean) => {
        closing ??= (async () => {
          clearTimeout(storeTimer);
          await lastCall;
          const store = await (opened ?? (reportUnopened ? openStore() : undefined))?.catch(() => undefined);
          await store?.context.close();
        })();
        return closing;
      };
      let signalled = false;
      const shutdown = async () => {
        // Before anything is awaited: the store must not open while the connection closes.
        signalled = true;
        clearTimeout(storeTimer);
        await server.close();
        await closeStore(false);
        process.exit(process.exitCode ?? 0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
      await server.closed;
      await closeStore(!signalled);
    });
}
