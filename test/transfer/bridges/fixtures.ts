/** Source files for the bridge tests: text (or raw bytes) by path, as a door would read them. */

import type { SourceFile } from '../../../src/transfer/bridges/plan.js';

export function files(contents: Record<string, string | Uint8Array>): SourceFile[] {
  return Object.entries(contents).map(([path, content]) => ({
    path,
    bytes: typeof content === 'string' ? new TextEncoder().encode(content) : content,
  }));
}

/** Bytes that are not UTF-8 text: the start of a PNG. */
export const BINARY = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x01]);

/** Entries that try to break the format: front-matter-like lines, fences, unicode, newlines or none. */
export const AWKWARD_ENTRIES = [
  { name: 'areas/engram', description: 'The memory server', body: 'TypeScript, Node 20.\nThree tools.\n' },
  { name: 'people/ada', description: 'Ada "the first" Lovelace: #1 \\ programmer', body: 'No final newline' },
  { name: 'topics/empty', description: 'An entry with an empty body', body: '' },
  { name: 'topics/fences', description: '--- not a fence ---', body: '---\ndescription: "fake"\n---\n\n---\n' },
  { name: 'topics/newlines', description: "it's 'quoted'", body: '\n\n\ntrailing\n\n\n' },
  { name: 'topics/unicode', description: 'Ünïcödé 🙂 \u2028 notes', body: '日本語 — naïve café 👩‍👩‍👧\ttab\n' },
  { name: 'topics/yaml', description: 'description: nested: yes # not a comment', body: 'key: value\n# heading\n' },
];

/** A Claude Code memory folder as Claude Code lays it out: MEMORY.md, linked topic files, front matter on some. */
export const CLAUDE_CODE_FOLDER = {
  'MEMORY.md':
    '# Memory\n\n## Build commands\n- `npm run build` then `npm test`\n\n## Topics\n' +
    '- [Debugging](debugging.md) — CORS errors in local are the Vite proxy\n' +
    '- [Deploy](deploy.md)\n' +
    '- [Old notes](gone.md)\n',
  'debugging.md': '# Debugging\n\nCORS errors in local are always the Vite proxy.\n',
  'deploy.md':
    '---\nname: deploy\ndescription: How the site is deployed\ntype: project\n---\n\nDeploys take 4 minutes.\n',
  'user_role.md':
    '---\nname: user role\ndescription: "The user is a data scientist"\ntype: user\n---\nFocus on observability.\n',
};
