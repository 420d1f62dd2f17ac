// A free TCP port on the loopback interface, for a server the bench starts (bench/README.md): the OS picks it, the
// probe closes, the server binds it next.
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}
