/**
 * Dispatch: a tool call (name + JSON arguments) -> the Memory service -> a plain-text
 * result. Never throws: every refusal is a result with `isError` and a message for the
 * model, and an unexpected failure is reported without details leaking out.
 */

import type { Caller, Memory } from '../memory.js';
import { isEngramError } from '../model/errors.js';
import { formatDropped, formatIndex, formatOpened, indexLine } from '../model/format.js';
import { proposedAnswer } from '../model/proposals.js';
import { parseDropArguments, parseOpenArguments, parseWriteArguments } from './arguments.js';
import { isToolName, TOOL_NAMES } from './definitions.js';

export interface ToolResult {
  readonly text: string;
  readonly isError: boolean;
  /** The error code when isError (INVALID_NAME, NOT_FOUND, …). */
  readonly code?: string;
}

export type ToolHandler = (caller: Caller, tool: string, args: unknown) => Promise<ToolResult>;

export interface ToolHandlerOptions {
  /** Where unexpected failures are reported (never arguments or bodies). */
  readonly onUnexpectedError?: (error: unknown) => void;
}

async function dispatch(memory: Memory, caller: Caller, tool: string, args: unknown): Promise<ToolResult> {
  switch (tool) {
    case 'memory_open': {
      const { names } = parseOpenArguments(args);
      if (names.length === 0) return { text: formatIndex(await memory.index(caller)), isError: false };
      const { found, missing } = await memory.open(caller, names, { byModel: true });
      return {
        text: formatOpened(found, missing),
        isError: found.length === 0,
        ...(found.length === 0 ? { code: 'NOT_FOUND' } : {}),
      };
    }
    case 'memory_write': {
      const { entry, proposal } = await memory.write(caller, parseWriteArguments(args));
      return { text: proposal ? proposedAnswer(proposal) : indexLine(entry), isError: false };
    }
    case 'memory_drop': {
      const { entry, proposal } = await memory.drop(caller, parseDropArguments(args).name);
      return { text: proposal ? proposedAnswer(proposal) : formatDropped(entry), isError: false };
    }
    default:
      return {
        text: `Unknown tool ${JSON.stringify(tool)}. The tools are ${TOOL_NAMES.join(', ')}.`,
        isError: true,
        code: 'UNKNOWN_TOOL',
      };
  }
}

export function createToolHandler(memory: Memory, options: ToolHandlerOptions = {}): ToolHandler {
  return async (caller, tool, args) => {
    try {
      return await dispatch(memory, caller, tool, args);
    } catch (error) {
      if (isEngramError(error)) return { text: error.message, isError: true, code: error.code };
      options.onUnexpectedError?.(error);
      return {
        text: `${isToolName(tool) ? tool : 'The tool'} failed because of an internal error. Try again; if it fails again, tell the user.`,
        isError: true,
        code: 'INTERNAL',
      };
    }
  };
}
