/**
 * A llama.cpp WebUI memory export, made as the WebUI makes it. The WebUI runs in a browser
 * (IndexedDB), so it cannot be driven here like the MCP memory server; this follows its
 * code instead — ggml-org/llama.cpp, commit 22249cf997b78f8e30257efe8bd3b367ea3bf69e:
 * tools/ui/src/lib/services/memory.service.ts (memory_write creates an entry with its
 * description folded onto one line and its body ending with a line break, appends
 * new_str on a line of its own, stamps `updated`; exportEntries() is `{entries}` in name
 * order, each stored as {body, description, name, updated}) and the settings' Export
 * memory (SettingsChatImportExportTab.svelte: JSON.stringify(data, null, 2), saved as
 * llama_memory_YYYY-MM-DD.json, constants/memory.ts).
 */

export interface WebuiWrite {
  readonly name: string;
  readonly description?: string;
  readonly new_str?: string;
}

interface Stored {
  body: string;
  description: string;
  name: string;
  updated: number;
}

const fold = (description: string) => description.replace(/\s+/g, ' ').trim();
const closed = (body: string) => (body.length > 0 && !body.endsWith('\n') ? `${body}\n` : body);

/**
 * The text of the file the WebUI saves after these memory_write calls (create, then
 * appends), the n-th write stamped `start + n` milliseconds.
 */
export function webuiMemoryExport(writes: readonly WebuiWrite[], start = Date.UTC(2026, 11, 1)): string {
  const entries = new Map<string, Stored>();
  writes.forEach((write, n) => {
    const updated = start + n;
    const existing = entries.get(write.name);
    if (!existing) {
      if (!write.description) throw new Error(`creating ${write.name} needs a description (as in the WebUI)`);
      const body = closed(write.new_str ?? '');
      entries.set(write.name, { body, description: fold(write.description), name: write.name, updated });
      return;
    }
    let body = existing.body;
    if (write.new_str !== undefined) {
      body = body.length === 0 || body.endsWith('\n') ? `${body}${write.new_str}\n` : `${body}\n${write.new_str}\n`;
    }
    const description = write.description === undefined ? existing.description : fold(write.description);
    entries.set(write.name, { body: closed(body), description, name: write.name, updated });
  });
  const sorted = [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return JSON.stringify({ entries: sorted }, null, 2);
}
