/**
 * Splits a byte stream into lines with bounded memory. A line longer than the limit is
 * reported once, as soon as it passes the limit, and its bytes are then dropped as they
 * arrive up to its newline, so one huge line never sits in memory whole.
 */

const NEWLINE = 0x0a;

export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline !== -1 && this.size === 0 && !this.discarding && newline - start <= this.maxBytes) {
        // A whole line in this chunk, the usual case: handed on as it lies, without a copy.
        this.onLine(chunk.subarray(start, newline));
      } else {
        this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
        if (newline === -1) return;
        this.endLine();
      }
      start = newline + 1;
    }
  }

  private take(piece: Buffer): void {
    if (this.discarding || piece.length === 0) return;
    if (this.size + piece.length > this.maxBytes) {
      this.parts = [];
      this.size = 0;
      this.discarding = true;
      this.onOversized();
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const line = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.onLine(line);
  }
}
