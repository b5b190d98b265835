/**
 * The caps on open WebSocket sockets, per token, per user and in all: each socket holds a
 * file descriptor for as long as it stays open (idle ones too, until the idle limit), so
 * without them one token could hold every descriptor the server has and starve everyone.
 * Counts sockets as they open and close, and says why one more may not open: a close code
 * and a reason (at most 123 bytes, as a close frame allows) naming the cap and what to do.
 */

export interface SocketCaps {
  readonly socketsPerToken: number;
  readonly socketsPerUser: number;
  readonly sockets: number;
}

export interface CapRefusal {
  /** 1008 (policy) for a caller's own caps, 1013 (try again later) for the server's. */
  readonly code: 1008 | 1013;
  readonly reason: string;
}

/** "1 socket", "2 sockets". */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

export class SocketCounts {
  private open = 0;
  private readonly perUser = new Map<string, number>();
  /** Keyed by the credentials presented (never logged nor shown); sockets without a token are not counted here. */
  private readonly perToken = new Map<string, number>();

  constructor(private readonly caps: SocketCaps) {}

  /** Why one more socket of this user (and token, if any) may not open; undefined when it may. */
  refusal(user: string, token: string | undefined): CapRefusal | undefined {
    const { socketsPerToken, socketsPerUser, sockets } = this.caps;
    if (token !== undefined && (this.perToken.get(token) ?? 0) >= socketsPerToken) {
      return {
        code: 1008,
        reason: `This token has ${countOf(socketsPerToken, 'socket')} open, the most it may: close one (in another tab or app) and connect again.`,
      };
    }
    if ((this.perUser.get(user) ?? 0) >= socketsPerUser) {
      return {
        code: 1008,
        reason: `This user has ${countOf(socketsPerUser, 'socket')} open, the most one user may: close one (in another tab or app) and connect again.`,
      };
    }
    if (this.open >= sockets) {
      return {
        code: 1013,
        reason: `The server has ${countOf(sockets, 'socket')} open, the most it keeps: try again in a minute.`,
      };
    }
    return undefined;
  }

  /** Counts an open socket; returns what uncounts it when it closes. */
  add(user: string, token: string | undefined): () => void {
    this.open++;
    increment(this.perUser, user);
    if (token !== undefined) increment(this.perToken, token);
    return () => {
      this.open--;
      decrement(this.perUser, user);
      if (token !== undefined) decrement(this.perToken, token);
    };
  }
}
