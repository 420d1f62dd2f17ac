// The Go kit's resource structs (docs/clients.md#go), generated from the committed OpenAPI document:
//   node scripts/go-models.mjs           write clients/go/sandbox/models_gen.go from openapi/openapi.json
//   node scripts/go-models.mjs --check   exit 1 when the committed file differs from what the document gives
//   --document FILE                      another document than openapi/openapi.json (the drift test uses one)
// test/kits/go.test.ts runs the check, so a change to the document without regenerating fails `npm test`.
// The output is already gofmt-clean (no Go toolchain needed to generate or check it): one field per line, no
// comments between fields, columns aligned the way gofmt aligns them; the kit's test also runs `gofmt -l` on it.
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

/** Generates the Go declarations of every component schema, in the document's order. */
export function generate(document) {
  const schemas = document.components.schemas;
  const declared = new Map(); // Go type name -> declaration text
  const order = [];
  let usesRawMessage = false;

  const refName = (ref) => goName(ref.replace('#/components/schemas/', ''));

  /** The Go type of a schema; `nullable` is true when null is one of its values. */
  function typeOf(schema, owner, where) {
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
        const inner = typeOf(nonNull[0], owner, where);
        return { ...inner, nullable: nullable || inner.nullable };
      }
      if (nonNull.every((variant) => typesOf(variant).length === 1 && typesOf(variant)[0] === 'string')) {
        return { type: 'string', nullable, kind: 'scalar' };
      }
      // Several shapes (a discriminated union): the raw JSON, to be decoded by the caller into the variant it names.
      usesRawMessage = true;
      return { type: 'json.RawMessage', nullable: false, kind: 'raw' };
    }
    if (schema.allOf && schema.allOf.length === 1) return typeOf(schema.allOf[0], owner, where);
    const types = typesOf(schema);
    const nullable = types.includes('null');
    const base = types.filter((type) => type !== 'null');
    if (base.length !== 1) {
      usesRawMessage = true;
      return { type: 'json.RawMessage', nullable: false, kind: 'raw' };
    }
    switch (base[0]) {
      case 'string':
        return { type: 'string', nullable, kind: 'scalar' };
      case 'boolean':
        return { type: 'bool', nullable, kind: 'scalar' };
      case 'integer':
        return { type: 'int64', nullable, kind: 'scalar' };
      case 'number': {
        const whole = Array.isArray(schema.enum) && schema.enum.every((value) => Number.isInteger(value));
        return { type: whole ? 'int64' : 'float64', nullable, kind: 'scalar' };
      }
      case 'array': {
        const item = typeOf(schema.items ?? {}, `${owner}Item`, `${where}[]`);
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
      const info = typeOf(field, name + fieldName, `${where}.${property}`);
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
  return `${header.join("\n")}\n${order.map((name) => declared.get(name)).join('\n\n')}\n`;
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
      console.error(`${path.relative(root, OUTPUT)} differs from what ${path.relative(root, document)} gives: run node scripts/go-models.mjs`);
      process.exit(1);
    }
    console.log(`${path.relative(root, OUTPUT)} matches ${path.relative(root, document)}`);
  } else {
    writeFileSync(OUTPUT, expected);
    console.log(`wrote ${path.relative(root, OUTPUT)}`);
  }
}
