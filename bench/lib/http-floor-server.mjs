// The HTTP floor of the session-create row (bench/README.md "Sessions", docs/benchmarks.md#sessions): a bare node:http
// server that reads a POST's body and answers 201 with a JSON body of a session's size (635 bytes), doing nothing else.
// The bench times it with the same client, body and pause as POST /_emulator/sessions, so the difference between the
// two is the emulator's own work, and the floor is what this machine's loopback, Node's HTTP and undici's fetch cost.
//
// Usage: node bench/lib/http-floor-server.mjs PORT ; GET answers 200 (the bench's ready check).
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const answer = JSON.stringify({ id: 'ses_0123456789abcdef', padding: 'x'.repeat(593) });
createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(request.method === 'POST' ? 201 : 200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    response.end(answer);
  });
}).listen(port, '127.0.0.1');
