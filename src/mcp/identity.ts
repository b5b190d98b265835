/**
 * What the server says of itself in `initialize`: its name, title and icon (serverInfo),
 * which clients show beside the server in their lists, what it serves (capabilities) and
 * how a model should use it (instructions). The icon is the web UI's favicon
 * (web/public/favicon.svg) as a base64 data: URI, so it reaches stdio clients too, which
 * have no HTTP server to fetch it from. Written without the SDK's runtime (types only), so
 * that `engram stdio` can answer the opening before loading it (stdio-opening.ts).
 */

import type { Implementation } from '@modelcontextprotocol/server';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>Engram</title>' +
  '<rect width="32" height="32" rx="7" fill="#3b5bdb"/>' +
  '<path d="M9 9h14v3H12.5v2.5H21v3h-8.5V20H23v3H9z" fill="#fff"/></svg>';

export const SERVER_ICON_URI = `data:image/svg+xml;base64,${Buffer.from(ICON_SVG, 'utf8').toString('base64')}`;

export function serverInfo(version: string): Implementation {
  return {
    name: 'engram',
    title: 'Engram',
    version,
    description: 'One persistent memory for every assistant you use.',
    icons: [{ src: SERVER_ICON_URI, mimeType: 'image/svg+xml', sizes: ['any'] }],
  };
}

/** What the server serves: tools, the memory's resources, prompts, and completion of entry names. A new object each time: the SDK's server keeps and may extend its own. */
export function serverCapabilities() {
  return { tools: {}, resources: {}, prompts: {}, completions: {} };
}

export const SERVER_INSTRUCTIONS =
  "Engram is the user's persistent memory, shared by every assistant they use. " +
  'At the start of a session, call memory_open with no arguments to read the index, then open the entries ' +
  'that matter for the conversation in one call. Write what the user states that will matter later; ' +
  'keep each entry on one subject.';
