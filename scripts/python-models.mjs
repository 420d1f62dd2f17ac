// The Python kit's typed models (docs/clients.md#python), generated from the committed OpenAPI document:
// one TypedDict per schema of components.schemas (resources, requests, the error body ServiceError and the
// control plane's answers), nested objects named after their parent and field, unions as typing.Union.
//   node scripts/python-models.mjs           write clients/python/src/service_sandbox/models.py
//   node scripts/python-models.mjs --check   exit 1 when the committed file differs from what the document gives
// test/kits/python-models.test.ts runs the same comparison in npm test, so a change of openapi/openapi.json
// without a regeneration fails CI.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = path.join(root, 'openapi', 'openapi.json');
export const MODELS = path.join(root, 'clients', 'python', 'src', 'service_sandbox', 'models.py');

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PYTHON_KEYWORDS = new Set(['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield']);

const pascal = (text) =>
  String(text)
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');

const pyString = (text) => JSON.stringify(String(text));

/** The Python source of models.py for an OpenAPI 3.1 document. */
export function renderModels(document) {
  const schemas = document.components?.schemas ?? {};
  const classes = []; // emitted in order: nested ones before their parent
  const taken = new Set(Object.keys(schemas));

  function uniqueName(wanted) {
    let name = wanted;
    for (let n = 2; taken.has(name); n += 1) name = `${wanted}${n}`;
    taken.add(name);
    return name;
  }

  /** The Python type of a schema; objects with properties become TypedDicts named `hint`. */
  function typeOf(schema, hint) {
    if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return 'Any';
    if (schema.$ref) return `"${schema.$ref.split('/').pop()}"`;
    const union = schema.oneOf ?? schema.anyOf;
    if (union) {
      const members = union.map((member, index) => typeOf(member, `${hint}${variantName(member, index)}`));
      return unionOf(members);
    }
    if (schema.enum) {
      const literal = `Literal[${schema.enum.map((value) => (value === null ? 'None' : JSON.stringify(value))).join(', ')}]`;
      return Array.isArray(schema.type) && schema.type.includes('null') && !schema.enum.includes(null) ? `Optional[${literal}]` : literal;
    }
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    const nullable = types.includes('null');
    const concrete = types.filter((type) => type !== 'null');
    const parts = concrete.map((type) => scalarOrContainer(type, schema, hint));
    if (parts.length === 0) return nullable ? 'None' : 'Any';
    const base = unionOf(parts);
    return nullable ? `Optional[${base}]` : base;
  }

  function variantName(member, index) {
    // A variant with a constant discriminator (instrumentType: "ACCOUNT") is named after it.
    for (const property of Object.values(member?.properties ?? {})) {
      if (property && typeof property.const === 'string') return pascal(property.const.toLowerCase());
    }
    return `Variant${index + 1}`;
  }

  function unionOf(parts) {
    const unique = [...new Set(parts)];
    if (unique.includes('Any')) return 'Any';
    return unique.length === 1 ? unique[0] : `Union[${unique.join(', ')}]`;
  }

  function scalarOrContainer(type, schema, hint) {
    switch (type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'array':
        return `List[${typeOf(schema.items, `${hint}Item`)}]`;
      case 'object':
        if (schema.properties && Object.keys(schema.properties).length > 0) return `"${emitClass(uniqueName(hint), schema)}"`;
        if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
          return `Dict[str, ${typeOf(schema.additionalProperties, `${hint}Value`)}]`;
        }
        return 'Dict[str, Any]';
      default:
        return 'Any';
    }
  }

  /** Emits a TypedDict for an object schema; required keys in one base, optional ones (total=False) in another. */
  function emitClass(name, schema) {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(([key, property]) => ({
      key,
      type: typeOf(property, `${name}${pascal(key)}`),
      required: required.has(key),
      description: property?.description,
    }));
    const lines = [];
    const doc = schema.description ? String(schema.description).replace(/\s+/g, ' ').trim() : '';
    const plain = fields.every((field) => IDENTIFIER.test(field.key) && !PYTHON_KEYWORDS.has(field.key));
    const requiredFields = fields.filter((field) => field.required);
    const optionalFields = fields.filter((field) => !field.required);
    if (plain) {
      // class syntax; optional keys in a total=False base so the required ones stay required
      let bases = 'TypedDict';
      if (optionalFields.length > 0 && requiredFields.length > 0) {
        lines.push(`class _${name}Optional(TypedDict, total=False):`);
        for (const field of optionalFields) lines.push(`    ${field.key}: ${field.type}`);
        lines.push('', '');
        bases = `_${name}Optional`;
      }
      const total = requiredFields.length === 0 && optionalFields.length > 0 ? ', total=False' : '';
      lines.push(`class ${name}(${bases}${total}):`);
      if (doc) lines.push(`    ${pyString(doc)}`);
      const own = requiredFields.length > 0 ? requiredFields : optionalFields;
      for (const field of own) lines.push(`    ${field.key}: ${field.type}`);
      if (!doc && own.length === 0) lines.push('    pass');
    } else {
      const entries = (list) => list.map((field) => `${pyString(field.key)}: ${field.type}`).join(', ');
      lines.push(`_${name}Required = TypedDict(${pyString(`_${name}Required`)}, {${entries(requiredFields)}})`);
      lines.push(`_${name}Optional = TypedDict(${pyString(`_${name}Optional`)}, {${entries(optionalFields)}}, total=False)`);
      lines.push('', '');
      lines.push(`class ${name}(_${name}Required, _${name}Optional):`);
      lines.push(doc ? `    ${pyString(doc)}` : '    pass');
    }
    classes.push(lines.join('\n'));
    return name;
  }

  const aliases = [];
  for (const [name, schema] of Object.entries(schemas)) {
    const isObject = (schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'))) && schema.properties;
    if (isObject && !schema.oneOf && !schema.anyOf) {
      emitClass(name, schema);
    } else {
      // a union or a scalar: an alias (its variants become classes of their own)
      aliases.push(`${name} = ${typeOf(schema, name).replace(/^"(.*)"$/, '$1')}`);
    }
  }

  return [
    '# GENERATED by scripts/python-models.mjs from openapi/openapi.json: do not edit by hand.',
    '# Regenerate with `node scripts/python-models.mjs`; test/kits/python-models.test.ts fails when this file',
    '# and the document differ (docs/clients.md#python).',
    '"""Typed models of the service-sandbox API: one TypedDict per schema of the OpenAPI document."""',
    '',
    'from typing import Any, Dict, List, Literal, Optional, TypedDict, Union',
    '',
    '',
    [...classes, ...aliases.map((line) => line)].join('\n\n\n'),
    '',
    '',
    `__all__ = [${Object.keys(schemas).map(pyString).join(', ')}]`,
    '',
  ].join('\n');
}

export function generatedModels() {
  return renderModels(JSON.parse(readFileSync(DOCUMENT, 'utf8')));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = generatedModels();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(MODELS, 'utf8');
    } catch {
      // missing: a difference like any other
    }
    if (current !== wanted) {
      console.error(`${path.relative(root, MODELS)} differs from openapi/openapi.json: run npm run generate`);
      process.exit(1);
    }
    console.log(`${path.relative(root, MODELS)} matches openapi/openapi.json`);
  } else {
    writeFileSync(MODELS, wanted);
    console.log(`wrote ${path.relative(root, MODELS)}`);
  }
}
