import type { z } from 'zod';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';

// How answers become JSON (docs/architecture.md#serialization). Every route's answer schema is a zod schema, and
// fastify-type-provider-zod's serializer parses each answer with it before JSON.stringify: a validation of every
// answer at run time, about half the serialization cost of a small list (docs/benchmarks.md#uncached-reads). Here
// each schema is compiled once into a writer that produces the very bytes zod's parse + JSON.stringify would
// produce for a valid answer (the keys of each object in the schema's order, keys the schema does not name left
// out) without validating it. Parts whose output zod computes (defaults, transforms, pipes) or chooses (unions)
// are still written through zod, so nothing depends on the shape of a valid answer being guessed.
//
// The check stays in the tests: with SANDBOX_CHECK_RESPONSES=1 (set for every test file, package.json `tap`)
// each answer is also parsed by zod, a schema violation is the same 500 it always was, and an answer whose
// compiled bytes differ from zod's fails loudly, so the conformance suites prove the two writers agree.

type Writer = (value: unknown) => string;

const CHECK = process.env.SANDBOX_CHECK_RESPONSES === '1';

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
}

const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** Leaves whose valid values zod's parse returns unchanged: JSON.stringify writes them as zod's output would be. */
const LEAVES = new Set(['string', 'number', 'int', 'boolean', 'null', 'enum', 'literal', 'unknown', 'any', 'bigint', 'date', 'nan', 'template_literal']);

const writers = new WeakMap<z.ZodType, Writer>();

/** A writer for values valid under `schema`, with exactly the bytes of JSON.stringify(schema.parse(value)). */
export function compileWriter(schema: z.ZodType): Writer {
  let writer = writers.get(schema);
  if (writer) return writer;
  writer = build(schema);
  writers.set(schema, writer);
  return writer;
}

function build(schema: z.ZodType): Writer {
  const def = defOf(schema);
  if (LEAVES.has(def.type)) return stringify;
  if (def.type === 'nullable') {
    const inner = compileWriter(def.innerType!);
    return (value) => (value === null ? 'null' : inner(value));
  }
  if (def.type === 'readonly') return compileWriter(def.innerType!);
  if (def.type === 'array') {
    const item = compileWriter(def.element!);
    if (item === stringify) return stringify;
    return (value) => {
      const items = value as unknown[];
      let out = '[';
      for (let index = 0; index < items.length; index += 1) {
        if (index > 0) out += ',';
        // JSON.stringify writes undefined array items as null; zod would have refused them
        out += items[index] === undefined ? 'null' : item(items[index]);
      }
      return `${out}]`;
    };
  }
  // A plain (stripping) object: its keys in the schema's order. Optional keys are left out when undefined,
  // as JSON.stringify leaves them out of zod's output.
  if (def.type === 'object' && def.catchall === undefined) {
    const fields = Object.entries(def.shape!).map(([key, field]) => {
      const fieldDef = defOf(field);
      const optional = fieldDef.type === 'optional';
      const fieldSchema = optional ? fieldDef.innerType! : field;
      // compiled on first use: a schema may refer to itself through a getter
      let writer: Writer | undefined;
      return { key, prefix: `${JSON.stringify(key)}:`, optional, write: (item: unknown) => (writer ??= compileWriter(fieldSchema))(item) };
    });
    return (value) => {
      const object = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const field of fields) {
        const item = object[field.key];
        if (item === undefined) {
          if (field.optional) continue;
          // a required key without a value: only zod knows what to say (it refuses it)
          return viaZod(schema, value);
        }
        out += first ? field.prefix : `,${field.prefix}`;
        first = false;
        out += field.write(item);
      }
      return `${out}}`;
    };
  }
  // Unions (zod picks the branch), defaults, transforms, pipes, records, passthrough or strict objects: zod.
  return (value) => viaZod(schema, value);
}

function stringify(value: unknown): string {
  return JSON.stringify(value);
}

function viaZod(schema: z.ZodType, value: unknown): string {
  return JSON.stringify(schema.parse(value));
}

/**
 * Fastify's serializer compiler for zod schemas: the compiled writer, and with SANDBOX_CHECK_RESPONSES=1 zod's own
 * serializer too, whose answer must be byte for byte the writer's.
 */
export const serializerCompiler: typeof zodSerializerCompiler = (route) => {
  const zodSerialize = zodSerializerCompiler(route);
  const schema = route.schema as z.ZodType;
  if (!schema || typeof schema !== 'object' || !('_zod' in schema)) return zodSerialize;
  const write = compileWriter(schema);
  if (!CHECK) return write as ReturnType<typeof zodSerializerCompiler>;
  return ((data: unknown) => {
    const expected = zodSerialize(data);
    const written = write(data);
    if (written !== expected) {
      throw new Error(`compiled serializer of ${route.method} ${route.url} differs from zod's:\n compiled: ${written.slice(0, 400)}\n zod:      ${expected.slice(0, 400)}`);
    }
    return written;
  }) as ReturnType<typeof zodSerializerCompiler>;
};
