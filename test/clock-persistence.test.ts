import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createContext } from '../src/context.factory.js';

// A restart on a database file must not move the emulated clock back behind what is recorded
// (contract 10: the clock only moves forward; interface 4.5 change sync relies on it).
t.test('the emulated clock survives a restart on a database file', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-clock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'state.db');
  const config = { db, clock: '2026-03-02T09:00:00.000Z', logLevel: 'silent' as const };

  const first = createContext({ config });
  first.clock.advance(5000);
  t.equal(first.clock.nowIso(), '2026-03-02T09:00:05.000Z');
  first.db.close();

  const second = createContext({ config });
  t.equal(second.clock.nowIso(), '2026-03-02T09:00:05.000Z', 'resumes the later recorded time, frozen');
  t.equal(second.clock.state().mode, 'frozen');
  second.db.close();

  const later = createContext({ config: { ...config, clock: '2026-04-01T00:00:00.000Z' } });
  t.equal(later.clock.nowIso(), '2026-04-01T00:00:00.000Z', 'a later --clock wins');
  later.clock.resume();
  later.clock.advance(3_600_000);
  const flowing = later.clock.nowMs();
  later.db.close();

  const realtime = createContext({ config: { ...config, clock: '2026-03-02T09:00:00.000Z' } });
  t.equal(realtime.clock.state().mode, 'realtime', 'a flowing clock resumes flowing');
  t.ok(realtime.clock.nowMs() >= flowing, 'and never behind the recorded time');
  realtime.db.close();
});

t.test('a fresh in-memory database starts at the --clock instant', async (t) => {
  const ctx = createContext({ config: { clock: '2026-03-02T09:00:00.000Z', logLevel: 'silent' } });
  t.equal(ctx.clock.nowIso(), '2026-03-02T09:00:00.000Z');
  ctx.db.close();
});
