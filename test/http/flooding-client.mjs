/**
 * A WebSocket client that never reads, run as a process of its own so that the server
 * under test does not pace it: opens /ws, stops reading at once, sends `count`
 * notifications of about `bytes` each as fast as the kernel takes them, says "sent" and
 * exits. Usage: node flooding-client.mjs <ws url> <bytes> <count>
 */

import { WebSocket } from 'ws';

const [url, bytes, count] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"padding":"';
const notification = `${head}${'x'.repeat(bytes - head.length - 3)}"}}`;
const later = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
  console.log('sent');
  socket.terminate();
});
