/** Lets TypeScript in web/ import .svelte files. */
declare module '*.svelte' {
  import type { Component } from 'svelte';

  const component: Component<Record<string, unknown>>;
  export default component;
}

/** Stylesheets imported for Vite to bundle. */
declare module '*.css';
