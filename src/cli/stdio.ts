/** `engram stdio`: serves the memory to one local MCP client over stdin/stdout. */

import type { Command } from 'commander';
import { createToolHandler } from '../tools/handler.js';
import { type CommonOptions, type Context, openContext, VERSION } from './context.js';
import { reportFailure } from './output.js';

function log(line: string): void {
  process.stderr.write(`engram: ${line}\n`);
}

export function registerStdioCommand(program: Command, common: (command: Command) => Command): void {
  common(program.command('stdio'))
    .description('Serve MCP over stdin/stdout (for Claude Desktop, Claude Code and other local clients)')
    .action(async (options: CommonOptions) => {
      let context: Context;
      try {
        context = await openContext(options);
      } catch (error) {
        process.exitCode = reportFailure(error, false);
        return;
      }
      // The MCP SDK is loaded only by the commands that serve MCP, to keep the CLI quick to start.
      const { serveMcpStdio } = await import('../mcp/stdio.js');
      const handler = createToolHandler(context.memory, {
        onUnexpectedError: (error) => log(`internal error: ${error instanceof Error ? error.stack : String(error)}`),
      });
      const server = serveMcpStdio(
        {
          handler,
          policy: context.settings.policy,
          version: VERSION,
          caller: (clientName) => ({ user: context.user, label: clientName ?? 'mcp' }),
        },
        log,
      );
      log(`serving MCP on stdio, database ${context.database}, user ${context.user}`);
      const shutdown = async () => {
        await server.close();
        await context.close();
        process.exit(0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
      await server.closed;
      await context.close();
    });
}
