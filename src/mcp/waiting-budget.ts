/**
 * The bytes of WebSocket messages received and not yet served, over every socket of a
 * server. Each socket caps its own queue (websocket-transport.ts `maxWaiting`), but a
 * thousand sockets each at their cap would hold gigabytes; so the server has one budget:
 * once the messages waiting reach it, every socket stops being read (the kernel's buffers
 * hold the clients back), and all are read again once half of it has been served.
 * Halfway, not at the first byte freed, so that a full budget does not pause and resume
 * every socket for each message served.
 */

/** Told when the budget fills (every socket must stop reading) or has room again. */
export type BudgetListener = () => void;

export class WaitingBudget {
  private bytes = 0;
  private isFull = false;
  private readonly listeners = new Set<BudgetListener>();

  constructor(private readonly maxBytes: number) {}

  /** Whether sockets must not be read now. */
  get full(): boolean {
    return this.isFull;
  }

  /** Calls `listener` each time the budget fills or has room again; returns how to stop. */
  watch(listener: BudgetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A message of `bytes` now waits to be served. */
  take(bytes: number): void {
    this.bytes += bytes;
    if (!this.isFull && this.bytes >= this.maxBytes) this.flip(true);
  }

  /** A message of `bytes` has been served (or dropped). */
  give(bytes: number): void {
    this.bytes -= bytes;
    if (this.isFull && this.bytes <= this.maxBytes / 2) this.flip(false);
  }

  private flip(full: boolean): void {
    this.isFull = full;
    for (const listener of this.listeners) listener();
  }
}
