/**
 * The page-wide keys that the open view acts on (App.svelte reads the keyboard): Escape,
 * to leave what is under way (a search, an edit, a confirmation), and `e`, to edit the
 * open entry. The presses of each are counted in one shared $state: App presses, and a
 * view reacts to the count changing while it is mounted, with no window events between.
 */

import { untrack } from 'svelte';

export type Shortcut = 'escape' | 'edit';

const presses = $state<Record<Shortcut, number>>({ escape: 0, edit: 0 });

export function press(shortcut: Shortcut): void {
  presses[shortcut] += 1;
}

/** Runs `act` on each press of `shortcut` from now on, while the component that calls this (as it is set up) lives. */
export function onPress(shortcut: Shortcut, act: () => void): void {
  let seen = untrack(() => presses[shortcut]);
  $effect(() => {
    const count = presses[shortcut];
    if (count === seen) return;
    seen = count;
    untrack(act);
  });
}
