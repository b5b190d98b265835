/**
 * A /memories folder made by the real thing: the Anthropic SDK's memory-tool helper
 * (BetaLocalFilesystemMemoryTool) run with the commands a model would send, on a test's
 * folder. Returns the folder it wrote (`<base>/memories`).
 */

import { join } from 'node:path';
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';

export type MemoryCommand =
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string };

export async function writeAnthropicMemory(base: string, commands: readonly MemoryCommand[]): Promise<string> {
  const tool = await BetaLocalFilesystemMemoryTool.init(base);
  for (const command of commands) {
    if (command.command === 'create') await tool.create(command);
    else if (command.command === 'str_replace') await tool.str_replace(command);
    else await tool.insert(command);
  }
  return join(base, 'memories');
}
