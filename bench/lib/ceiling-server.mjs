// The ceiling of the benchmark: a bare Fastify app (no hooks, no logger, no validation) answering
// GET /v1/transactions with a 25-transaction page prebuilt in memory, so only HTTP and Fastify's own
// send path cost anything. Usage: node bench/lib/ceiling-server.mjs PORT PAGE_FILE
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [port, pageFile] = process.argv.slice(2);
const page = readFileSync(pageFile, 'utf8');
const app = Fastify({ logger: false });
app.get('/v1/transactions', (_request, reply) => {
  reply.type('application/json; charset=utf-8').send(page);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
