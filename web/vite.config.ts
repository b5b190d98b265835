/**
 * Builds the web UI (web/) into dist/web (npm run build: into its fresh build folder's
 * web/, by --outDir), which `engram serve` serves at / (src/http/web.ts):
 * Svelte compiled to plain JavaScript and CSS files with hashed names, nothing inline (the
 * server's CSP allows no inline script or style), nothing fetched from elsewhere.
 */

import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [svelte({ compilerOptions: { css: 'external' } })],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Inline assets would be data: URLs; keep every asset a file of its own.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // On a busy 2-core machine the Svelte compiler takes most of a short build: not worth a warning.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
});
