// The Go kit's resource structs (docs/clients.md#go), generated from the committed OpenAPI document:
//   node scripts/go-models.mjs           write clients/go/sandbox/models_gen.go from openapi/openapi.json
//   node scripts/go-models.mjs --check   exit 1 when the committed file differs from what the document gives
//   --document FILE                      another document than openapi/openapi.json (the drift test uses one)
// test/kits/go.test.ts runs the check, so a change to the document without regenerating fails `npm test`.
// The output is already gofmt-clean (no Go toolchain needed to generate or check it): one field per line, no
// comments between fields, columns aligned the way gofmt aligns them; the kit's test also runs `gofmt -l` on it.
// A string property with two or more enum values gets a named string type with a constant per value
// (TransactionStatusCompleted); properties with the same name and the same values share one type, named after
// the shortest schema that has it.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = path.join(root, 'openapi', 'openapi.json');
export const OUTPUT = path.join(root, 'clients', 'go', 'sandbox', 'models_gen.go');

/** Words written in capitals in Go names (the Go convention for initialisms: UserID, BaseURL). */
const INITIALISMS = new Map(['id', 'url', 'api', 'http', 'json', 'iban', 'bic', 'uetr', 'pdf', 'ui'].map((word) => [word, word.toUpperCase()]));

function goName(name) {
  const words = name
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim()
    .split(/\s+/);
  const joined = words.map((word) => INITIALISMS.get(word.toLowerCase()) ?? word[0].toUpperCase() + word.slice(1)).join('');
  return /^[0-9]/.test(joined) ? `X${joined}` : joined;
}

function oneLine(text) {
  return String(text).replace(/\s+/g, ' ').trim();
}

function typesOf(schema) {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type === undefined ? [] : [schema.type];
}

/** A constant's name part for an enum value: COMPLETED -> Completed, SEPA_INSTANT -> SepaInstant, accounts:read -> AccountsRead. */
function valueName(value) {
  return goName(value === value.toUpperCase() ? value.toLowerCase() : value);
}

/** Generates the Go declarations of every component schema, in the document's order. */
export function generate(document) {
  // First pass: where each enum appears; then one name per (property, values).
  const uses = [];
  build(document, null, uses);
  const groups = new Map();
  for (const use of uses) {
    const key = `${use.property}\u0000${use.values.join('\u0000')}`;
    const group = groups.get(key) ?? { property: use.property, values: use.values, owners: [], wheres: [] };
    group.owners.push(use.owner);
    group.wheres.push(use.where);
    groups.set(key, group);
  }
  const names = new Map();
  const taken = new Set(Object.keys(document.components.schemas).map(goName));
  for (const [key, group] of groups) {
    const candidates = [...new Set(group.owners)].sort((a, b) => a.length - b.length || a.localeCompare(b));
    const name = candidates.map((owner) => owner + goName(group.property)).find((candidate) => !taken.has(candidate));
    if (!name) throw new Error(`no free Go type name for the enum ${group.wheres[0]}`);
    taken.add(name);
    names.set(key, { name, ...group });
  }
  return build(document, names, null);
}

function build(document, enumNames, enumUses) {
  const schemas = document.components.schemas;
  const enums = new Map(); // Go type name -> its group, in order of first use
  const declared = new Map(); // Go type name -> declaration text
  const order = [];
  let usesRawMessage = false;

  const refName = (ref) => goName(ref.replace('#/components/schemas/', ''));

  /** The Go type of a schema; `nullable` is true when null is one of its values. `property` names the field it is
   * (an enum's type name comes from it and from parent, the struct it is in). */
  function typeOf(schema, owner, where, property, parent) {
    if (schema.$ref) {
      // A component with properties is a struct; a union component is an alias of json.RawMessage (no pointer).
      const target = schemas[schema.$ref.replace('#/components/schemas/', '')];
      return { type: refName(schema.$ref), nullable: false, kind: target?.properties ? 'struct' : 'raw' };
    }
    const variants = schema.anyOf ?? schema.oneOf;
    if (variants) {
      const nonNull = variants.filter((variant) => !(variant.type === 'null'));
      const nullable = nonNull.length < variants.length;
      if (nonNull.length === 1) {
        const inner = typeOf(nonNull[0], owner, where, property, parent);
        return { ...inner, nullable: nullable || inner.nullable };
      }
      if (nonNull.every((variant) => typesOf(variant).length === 1 && typesOf(variant)[0] === 'string')) {
        return { type: 'string', nullable, kind: 'scalar' };
      }
      // Several shapes (a discriminated union): the raw JSON, to be decoded by the caller into the variant it names.
      usesRawMessage = true;
      return { type: 'json.RawMessage', nullable: false, kind: 'raw' };
    }
    if (schema.allOf && schema.allOf.length === 1) return typeOf(schema.allOf[0], owner, where, property, parent);
    const types = typesOf(schema);
    const nullable = types.includes('null');
    const base = types.filter((type) => type !== 'null');
    if (base.length !== 1) {
      usesRawMessage = true;
      return { type: 'json.RawMessage', nullable: false, kind: 'raw' };
    }
    switch (base[0]) {
      case 'string': {
        const values = Array.isArray(schema.enum) ? schema.enum.filter((value) => typeof value === 'string') : [];
        if (property === undefined || values.length < 2) return { type: 'string', nullable, kind: 'scalar' };
        if (enumUses) {
          enumUses.push({ property, values, owner: parent, where });
          return { type: 'string', nullable, kind: 'scalar' };
        }
        const group = enumNames.get(`${property}\u0000${values.join('\u0000')}`);
        if (!enums.has(group.name)) enums.set(group.name, group);
        return { type: group.name, nullable, kind: 'scalar' };
      }
      case 'boolean':
        return { type: 'bool', nullable, kind: 'scalar' };
      case 'integer':
        return { type: 'int64', nullable, kind: 'scalar' };
      case 'number': {
        const whole = Array.isArray(schema.enum) && schema.enum.every((value) => Number.isInteger(value));
        return { type: whole ? 'int64' : 'float64', nullable, kind: 'scalar' };
      }
      case 'array': {
        const item = typeOf(schema.items ?? {}, `${owner}Item`, `${where}[]`, property, parent);
        return { type: `[]${item.nullable && item.kind !== 'raw' ? '*' : ''}${item.type}`, nullable, kind: 'collection' };
      }
      case 'object': {
        if (schema.properties && Object.keys(schema.properties).length > 0) {
          declare(owner, schema, where);
          return { type: owner, nullable, kind: 'struct' };
        }
        const extra = schema.additionalProperties;
        if (extra && typeof extra === 'object' && Object.keys(extra).length > 0) {
          const value = typeOf(extra, `${owner}Value`, `${where}{}`);
          return { type: `map[string]${value.type}`, nullable, kind: 'collection' };
        }
        return { type: 'map[string]any', nullable, kind: 'collection' };
      }
      default:
        usesRawMessage = true;
        return { type: 'json.RawMessage', nullable: false, kind: 'raw' };
    }
  }

  function declare(name, schema, where) {
    if (declared.has(name)) throw new Error(`two schemas give the Go type ${name}`);
    declared.set(name, ''); // reserved while its fields are worked out (nested types are declared after it)
    order.push(name);
    const required = new Set(schema.required ?? []);
    const rows = [];
    for (const [property, field] of Object.entries(schema.properties ?? {})) {
      const fieldName = goName(property);
      const info = typeOf(field, name + fieldName, `${where}.${property}`, property, name);
      const optional = !required.has(property);
      // A field that may be absent or null is a pointer (scalars and structs) or an empty collection, and is left
      // out when sending: a request struct then sends only what was set.
      const pointer = (optional || info.nullable) && (info.kind === 'scalar' || info.kind === 'struct');
      const type = `${pointer ? '*' : ''}${info.type}`;
      const tag = `\`json:"${property}${optional || info.nullable ? ',omitempty' : ''}"\``;
      rows.push([fieldName, type, tag]);
    }
    const nameWidth = Math.max(...rows.map((row) => row[0].length));
    const typeWidth = Math.max(...rows.map((row) => row[1].length));
    const lines = [];
    const description = schema.description ? ` ${oneLine(schema.description)}` : '';
    lines.push(`// ${name} is ${where} in openapi/openapi.json.${description}`);
    lines.push(`type ${name} struct {`);
    for (const [fieldName, type, tag] of rows) {
      lines.push(`\t${fieldName.padEnd(nameWidth)} ${type.padEnd(typeWidth)} ${tag}`);
    }
    lines.push('}');
    declared.set(name, lines.join('\n'));
  }

  for (const [name, schema] of Object.entries(schemas)) {
    const goType = goName(name);
    if (schema.properties) {
      declare(goType, schema, name);
      continue;
    }
    // A union or a scalar component: a named type over what it decodes to.
    const info = typeOf(schema, goType, name);
    declared.set(goType, `// ${goType} is ${name} in openapi/openapi.json: one of several shapes, kept as raw JSON.${schema.description ? ` ${oneLine(schema.description)}` : ''}\ntype ${goType} = ${info.type}`);
    order.push(goType);
  }

  const header = [
    '// Code generated by scripts/go-models.mjs from openapi/openapi.json; DO NOT EDIT.',
    '',
    `// The resources and error body of the service-sandbox API (OpenAPI ${document.info?.version ?? ''}), as Go structs: a`,
    '// field that may be absent or null is a pointer or an empty collection. Regenerate with',
    '// `node scripts/go-models.mjs` (docs/clients.md#go).',
    '',
    'package sandbox',
    '',
  ];
  if (usesRawMessage) header.push('import "encoding/json"', '');
  const enumDeclarations = [...enums.values()].map((group) => {
    const constants = group.values.map((value) => [`${group.name}${valueName(value)}`, value]);
    if (new Set(constants.map(([constant]) => constant)).size !== constants.length) throw new Error(`two values of ${group.wheres[0]} give one Go constant name`);
    const width = Math.max(...constants.map(([constant]) => constant.length));
    const more = group.wheres.length > 1 ? ` (and ${group.wheres.length - 1} more)` : '';
    return [
      `// ${group.name} is the values of ${group.wheres[0]}${more} in openapi/openapi.json.`,
      `type ${group.name} string`,
      '',
      `// The values of ${group.name}.`,
      'const (',
      ...constants.map(([constant, value]) => `\t${constant.padEnd(width)} ${group.name} = ${JSON.stringify(value)}`),
      ')',
    ].join('\n');
  });
  return `${header.join("\n")}\n${[...order.map((name) => declared.get(name)), ...enumDeclarations].join('\n\n')}\n`;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const documentAt = process.argv.indexOf('--document');
  const document = documentAt > 0 ? path.resolve(process.argv[documentAt + 1]) : DOCUMENT;
  const expected = generate(JSON.parse(readFileSync(document, 'utf8')));
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(OUTPUT, 'utf8');
    } catch {
      // missing: a difference like any other
    }
    if (committed !== expected) {
      console.error(`${path.relative(root, OUTPUT)} differs from what ${path.relative(root, document)} gives: run npm run generate`);
      process.exit(1);
    }
    console.log(`${path.relative(root, OUTPUT)} matches ${path.relative(root, document)}`);
  } else {
    writeFileSync(OUTPUT, expected);
    console.log(`wrote ${path.relative(root, OUTPUT)}`);
  }
}
