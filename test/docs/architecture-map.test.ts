import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { stateSlots } from '../../src/modules.js';

// docs/architecture.md kept true by the code (docs/architecture.md#folder-map, #runtime): the runtime table has one row
// per StateSlot the modules declare, naming the file that declares it, and no other; the folder map lists every folder
// under src/ and every control-plane area, and names no path that does not exist. No counts in prose: the table and the
// map say what there is.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');

function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no "## ${heading}"`);
  const end = DOC.indexOf('\n## ', start + 4);
  return DOC.slice(start, end < 0 ? undefined : end);
}
const rows = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.slice(2, -2).split(' | '));

t.test('the runtime table lists every state slot, in the file that declares it', async (t) => {
  const table = rows(section('Runtime')).filter((cells) => cells.length >= 5);
  const documented = new Map(table.map((cells) => [cells[0]!.replace(/`/g, ''), cells[1]!.replace(/`/g, '')]));
  const declared = stateSlots.map((slot) => slot.name);
  t.same(declared.filter((name) => !documented.has(name)), [], 'every slot of a descriptor has a row (docs/architecture.md#runtime)');
  t.same([...documented.keys()].filter((name) => !declared.includes(name)), [], 'every row is a slot some descriptor lists');
  for (const [name, file] of documented) {
    const source = path.join(ROOT, 'src', file);
    t.ok(existsSync(source) && readFileSync(source, 'utf8').includes(`name: '${name}'`), `${name}: declared in src/${file}`);
  }
  t.notMatch(DOC, /\b\d+ (of the \d+ )?(runtime )?slots\b/, 'no count of slots in prose');
});

t.test('the folder map lists every folder under src/ and names nothing that does not exist', async (t) => {
  const map = section('Folder map');
  const firstCells = rows(map).map((cells) => cells[0]!);
  const listed = firstCells.flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
  const folders = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => [`${dir}/${entry.name}`, ...folders(`${dir}/${entry.name}`)]);
  for (const folder of folders('src')) {
    const top = folder.split('/').length === 2;
    const domain = /^src\/domains\/[^/]+$/.test(folder);
    const named = top
      ? listed.some((entry) => entry === `${folder}/` || entry.startsWith(`${folder}/`))
      : domain
        ? listed.includes('src/domains/<name>/')
        : map.includes(`${path.basename(folder)}/`);
    t.ok(named, `${folder}/ is in the folder map`);
  }
  for (const entry of listed.filter((item) => item.startsWith('src/') && !item.includes('<'))) {
    t.ok(existsSync(path.join(ROOT, entry)), `${entry} exists`);
  }
  // every control-plane area (an <area>.routes.ts of src/emulator) is named in its row
  const emulatorRow = map.split('\n').find((line) => line.startsWith('| `src/emulator/`')) ?? '';
  // a part of an area (`<area>.<part>.routes.ts`, what npm run new:endpoint writes) is named by its area
  for (const file of readdirSync(path.join(ROOT, 'src', 'emulator')).filter((name) => name.endsWith('.routes.ts'))) {
    const area = file.replace(/\.routes\.ts$/, '');
    const parent = area.split('.')[0]!;
    const named = emulatorRow.includes(`\`${area}\``) || emulatorRow.includes(`\`${file}\``) || (area.includes('.') && emulatorRow.includes(`\`${parent}\``));
    t.ok(named, `the src/emulator/ row names the area ${area}${area.includes('.') ? ` or ${parent}` : ''}`);
  }
});
