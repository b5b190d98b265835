/**
 * Imports are the largest requests a server takes (a whole memory in one body), so they
 * are let in one per user and a few across the server at a time: concurrent large imports
 * must not multiply what the process holds nor stall everyone else. A request that finds
 * the gate closed is refused at once, before its body is read.
 */

/** Imports running at once across the server, by default. */
export const MAX_CONCURRENT_IMPORTS = 2;

export type GateRefusal = 'user-busy' | 'server-busy';

export class ImportGate {
  private readonly importing = new Set<string>();

  constructor(private readonly maxConcurrent = MAX_CONCURRENT_IMPORTS) {}

  /** Lets `user` in and returns how to leave, or says why not. */
  enter(user: string): { readonly leave: () => void } | { readonly refused: GateRefusal } {
    if (this.importing.has(user)) return { refused: 'user-busy' };
    if (this.importing.size >= this.maxConcurrent) return { refused: 'server-busy' };
    this.importing.add(user);
    return { leave: () => this.importing.delete(user) };
  }
}

export function gateRefusalMessage(refusal: GateRefusal): string {
  return refusal === 'user-busy'
    ? 'Another import into this memory is still running; nothing was imported. Try again when it has finished.'
    : 'The server is already running as many imports as it takes at once; nothing was imported. Try again in a moment.';
}
