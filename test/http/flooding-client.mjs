/**
 * WebSocket clients that never read, run as a process of its own so that the server
 * under test does not pace them: opens `sockets` sockets to /ws (one unless told), each
 * stops reading at once and sends `count` notifications of about `bytes` each as fast as
 * the kernel takes them; once all have sent everything, says "sent" and exits.
 * Usage: node flooding-client.mjs <ws url> <bytes> <count> [sockets]
 */

import { WebSocket } from 'ws';

const [url, bytes, count] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const sockets = Number(process.argv[5] ?? 1);
const head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"padding":"';
const notification = `${head}${'x'.repeat(bytes - head.length - 3)}"}}`;
const later = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function flood() {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, ['mcp']);
    socket.on('error', (error) => {
      console.error(error.message);
      process.exit(1);
    });
    socket.on('open', async () => {
      socket.pause();
      for (let i = 0; i < count; i++) {
        // A few messages wait in this process at most: the rest waits for the server to read.
        while (socket.bufferedAmount > 4 * bytes) await later(1);
        socket.send(notification);
      }
      while (socket.bufferedAmount > 0) await later(5);
      resolve(socket);
    });
  });
}

const flooded = await Promise.all(Array.from({ length: sockets }, flood));
console.log('sent');
for (const socket of flooded) socket.terminate();
