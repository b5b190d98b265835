/**
 * The memory as MCP resources, for clients that attach context by hand (Claude Desktop
 * and Code, the llama.cpp WebUI): `memory://index`, the index, and the template
 * `memory://entry/{name}`, one entry — each exactly what memory_open returns for it,
 * read through the same tool handler, so the same caller, token rules and (on stdio)
 * order of calls apply as to the tools.
 *
 * Only the index is listed: listing every entry would hand clients a list as long as the
 * memory (thousands of items, each list a read of the whole index) to show in a picker.
 * Entries are reached through the template, whose `name` completes from the Memory
 * service's bounded list of names (Memory.names), never from the index's text.
 *
 * A name's `/` is percent-encoded in an entry URI (`memory://entry/topics%2Ftea`), as
 * RFC 6570 simple expansion — the SDK's UriTemplate and the clients that expand the
 * template — writes it; a hand-written `memory://entry/topics/tea` is read too.
 */

import {
  type CompleteResult,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type ResourceTemplateType,
  UriTemplate,
} from '@modelcontextprotocol/server';
import type { Memory } from '../memory/memory.js';
import type { Caller } from '../memory/model/caller.js';
import { isEngramError } from '../memory/model/errors.js';
import type { ToolHandler, ToolResult } from '../memory/tools/handler.js';

export const INDEX_URI = 'memory://index';
export const ENTRY_TEMPLATE = 'memory://entry/{name}';
const ENTRY_PREFIX = 'memory://entry/';
const MIME_TYPE = 'text/markdown';
/** The most completions one answer carries (the spec's cap). */
const MAX_COMPLETIONS = 100;

const entryTemplate = new UriTemplate(ENTRY_TEMPLATE);

export const INDEX_RESOURCE: Resource = {
  uri: INDEX_URI,
  name: 'index',
  title: 'Memory index',
  description:
    'Every entry of your memory, one line each: name (size): description. Attach it to start a conversation.',
  mimeType: MIME_TYPE,
};

export const ENTRY_RESOURCE_TEMPLATE: ResourceTemplateType = {
  uriTemplate: ENTRY_TEMPLATE,
  name: 'entry',
  title: 'Memory entry',
  description:
    'One entry of your memory by name, such as topics/preferences (its / written %2F: memory://entry/topics%2Fpreferences).',
  mimeType: MIME_TYPE,
};

/** The URI of one entry, as the template expands it. */
export function entryUri(name: string): string {
  return entryTemplate.expand({ name });
}

/** The entry name an entry URI carries, decoded; undefined when the URI is not one. */
export function entryNameOf(uri: string): string | undefined {
  if (!uri.startsWith(ENTRY_PREFIX)) return undefined;
  try {
    return decodeURIComponent(uri.slice(ENTRY_PREFIX.length));
  } catch {
    return undefined;
  }
}

/** A failure of the handler itself (never a refusal) is the server's internal error. */
function internalError(result: ToolResult): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InternalError, result.text);
}

export interface MemoryResources {
  read(caller: Caller, uri: string): Promise<ReadResourceResult>;
  /** Entry names for the template's `name` (or a subject): those starting with `value`, or whose slug does. */
  completeName(caller: Caller, value: string): Promise<CompleteResult>;
}

/** What completion asks of the Memory service. */
export type EntryNames = Pick<Memory, 'names'>;

export function createMemoryResources(
  handler: ToolHandler,
  memory: EntryNames,
  /** Where a completion's unexpected failure is reported, as the tool handler reports a tool's. */
  onUnexpectedError?: (error: unknown) => void,
): MemoryResources {
  const open = (caller: Caller, names?: readonly string[]) =>
    handler(caller, 'memory_open', names === undefined ? {} : { names });

  return {
    async read(caller, uri) {
      if (uri === INDEX_URI) {
        const index = await open(caller);
        if (index.isError) throw internalError(index);
        return { contents: [{ uri, mimeType: MIME_TYPE, text: index.text }] };
      }
      const name = entryNameOf(uri);
      if (name === undefined) {
        throw new ResourceNotFoundError(
          uri,
          `Unknown resource ${uri}. The resources are ${INDEX_URI} and ${ENTRY_TEMPLATE}, ` +
            `such as ${entryUri('topics/preferences')}.`,
        );
      }
      const opened = await open(caller, [name]);
      if (opened.code === 'INTERNAL') throw internalError(opened);
      if (opened.isError) throw new ResourceNotFoundError(uri, opened.text);
      return { contents: [{ uri, mimeType: MIME_TYPE, text: opened.text }] };
    },

    async completeName(caller, value) {
      let listed: Awaited<ReturnType<EntryNames['names']>>;
      try {
        listed = await memory.names(caller, value, MAX_COMPLETIONS);
      } catch (error) {
        if (!isEngramError(error)) onUnexpectedError?.(error);
        // Never the failure's own words (a store's message): the client shows this in a menu.
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          'Completing the name failed because of an internal error. Try again.',
        );
      }
      const { names, total } = listed;
      return { completion: { values: [...names], total, hasMore: total > names.length } };
    },
  };
}
