import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import tap from 'tap';
import { openDatabase, openImage, SCHEMA_IMAGE } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';

// docs/benchmarks.md#the-schema-image: an in-memory database opens the build's image of the migrated schema
// (dist/schema.sqlite) instead of running the migrations; it must be the very schema the migrations make.
const schemaOf = (db: Database.Database) =>
  db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name").all();

tap.test('an in-memory database has the schema the migrations make, image or not', async (t) => {
  const fresh = new Database(':memory:');
  t.teardown(() => fresh.close());
  migrate(fresh);
  const latest = Math.max(...migrations.map((migration) => migration.version));

  const opened = openDatabase(':memory:');
  t.teardown(() => opened.close());
  t.same(schemaOf(opened), schemaOf(fresh), 'every table, index and trigger, as migrated');
  t.equal(opened.pragma('user_version', { simple: true }), latest, 'at the latest migration');
  t.equal(opened.pragma('foreign_keys', { simple: true }), 1, 'foreign keys on');
  t.same(opened.prepare('SELECT COUNT(*) AS n FROM programmes').get(), { n: 0 }, 'empty');

  if (!existsSync(SCHEMA_IMAGE)) {
    t.comment(`${SCHEMA_IMAGE} is missing (not built): the migrations ran instead`);
    return;
  }
  const image = openImage(readFileSync(SCHEMA_IMAGE));
  t.teardown(() => image.close());
  t.same(schemaOf(image), schemaOf(fresh), 'the build image itself is the migrated schema');
  t.equal(image.pragma('user_version', { simple: true }), latest, 'the image is of this build');
  // two databases opened from it are apart: a write to one is not in the other
  const other = openDatabase(':memory:');
  t.teardown(() => other.close());
  opened.prepare("INSERT INTO meta (key, value) VALUES ('probe', '1')").run();
  t.same(other.prepare("SELECT * FROM meta WHERE key = 'probe'").all(), [], 'each database is its own copy');
});
