/**
 * The lines a stream carries, taken one at a time: `next()` resolves with the next line
 * (without its newline), at once when one has come, else when it comes. How the stdio fast
 * path's proof (stdio-sdk.ts) reads the SDK's answers on an in-memory pipe, one per
 * question; the stdio tests read a server's answers the same way.
 */

import type { Readable } from 'node:stream';

export class LineQueue {
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string) => void)[] = [];
  private buffered = '';

  constructor(stream: Readable) {
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let end = this.buffered.indexOf('\n'); end >= 0; end = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 1);
        const waiter = this.waiting.shift();
        if (waiter) waiter(line);
        else this.lines.push(line);
      }
    });
  }

  next(): Promise<string> {
    const line = this.lines.shift();
    return line === undefined ? new Promise((resolve) => this.waiting.push(resolve)) : Promise.resolve(line);
  }

  /** Lines received and not yet taken. */
  get pending(): number {
    return this.lines.length;
  }
}
