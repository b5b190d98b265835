/**
 * A memory.jsonl made by the real thing: `@modelcontextprotocol/server-memory` started over
 * stdio with MEMORY_FILE_PATH pointing at a test's file, driven by the MCP SDK client
 * through its own tools, as a model would. The importer's tests read what it wrote.
 */

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const SERVER = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json')),
  'dist/index.js',
);

export interface GraphEntity {
  readonly name: string;
  readonly entityType: string;
  readonly observations: string[];
}

export interface GraphRelation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
}

/**
 * Has the server write `file`: creates the entities, then the relations, then adds the
 * observations (by entity name), each through the server's tool, then stops it.
 */
export async function writeServerMemory(
  file: string,
  graph: {
    entities: GraphEntity[];
    relations?: GraphRelation[];
    observations?: { entityName: string; contents: string[] }[];
  },
): Promise<void> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: file },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'engram-import-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    };
    await call('create_entities', { entities: graph.entities });
    if (graph.relations) await call('create_relations', { relations: graph.relations });
    if (graph.observations) await call('add_observations', { observations: graph.observations });
  } finally {
    await client.close();
  }
}
