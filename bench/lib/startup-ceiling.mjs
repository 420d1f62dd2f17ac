// The start-up ceiling of the benchmark (bench/README.md, "The start-up ceiling"): the least a Fastify +
// better-sqlite3 server does before its first answer. It loads both, opens an in-memory database, creates one table,
// registers one route that reads it, and listens; the bench times it from spawn to the first answer of
// GET /_emulator/health, exactly as it times the emulator's cold start, one start of each alternately.
// Usage: node bench/lib/startup-ceiling.mjs PORT
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const db = new Database(':memory:');
db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('status', 'ok')");
const status = db.prepare("SELECT value FROM meta WHERE key = 'status'").pluck();
const app = Fastify({ logger: false });
app.get('/_emulator/health', async () => ({ status: status.get(), now: new Date().toISOString() }));
await app.listen({ port, host: '127.0.0.1' });
