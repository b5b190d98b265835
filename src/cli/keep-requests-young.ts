/**
 * Why `engram serve` turns off V8's allocation-site pretenuring. V8 allocates the objects
 * of an object or array literal straight in the old generation once it has seen most of
 * them outlive a scavenge; the literals of Node's HTTP stack and of EventEmitter.once are
 * shared by long-lived objects (a connection's) and per-request ones, so at a server's
 * start, as a client opens its connections, such a literal can be judged long-lived. From
 * then on each request's copy is born old, dies old, and until the next full collection
 * still points at its request's young objects, which every scavenge must then keep and,
 * at the second, promote: measured at 64 connections, some 3.6 KB promoted per read
 * instead of none, three to four times the scavenges' time and a full collection every few
 * seconds, in about half of the server's starts. Without pretenuring every request's
 * objects die young, at every start. A server's long-lived objects are few and made once;
 * they are copied into the old generation by the scavenges instead.
 */

import v8 from 'node:v8';

/** Turns pretenuring off for this process (V8 reads the flag at each collection). */
export function keepRequestsYoung(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
