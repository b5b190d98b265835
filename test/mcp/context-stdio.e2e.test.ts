/**
 * Resources, prompts and the server's identity over MCP stdio: `engram stdio` spawned on
 * a fresh database and driven by the official SDK clients (v1, and v2 in both eras) —
 * the same answers as over HTTP (test/http/context.test.ts).
 */

import { describe, it, onTestFinished } from 'vitest';
import { CONTEXT_CLIENTS, type ContextClient, type ContextClientKind } from '../helpers/context-clients.js';
import { expectIdentity, expectPrompts, expectResources } from '../helpers/context-scenarios.js';
import { tempDir } from '../helpers/engram.js';

async function connect(kind: ContextClientKind): Promise<ContextClient> {
  const dir = tempDir();
  const client = await kind.stdio({ db: dir.file('memory.db'), configHome: dir.path });
  onTestFinished(() => client.close());
  return client;
}

describe.each(CONTEXT_CLIENTS)('$label over stdio', (kind) => {
  it('names itself, then lists and reads the resources and fills in the prompts', async () => {
    const client = await connect(kind);
    expectIdentity(client);
    await expectResources(client);
    await expectPrompts(client);
  });
});
