/**
 * How the server names itself in `initialize` (serverInfo): its title and icon, which
 * clients show beside the server in their lists. The icon is the web UI's favicon
 * (web/public/favicon.svg) as a base64 data: URI, so it reaches stdio clients too, which
 * have no HTTP server to fetch it from.
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
