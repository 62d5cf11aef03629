import { createServer } from 'node:net';

/**
 * A TCP port that is free on 127.0.0.1 right now. Another process may take it before the emulator
 * binds, so the stack retries a start whose emulator could not bind.
 */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
