import { isInt64Number, isJsonObject, type JsonObject, type JsonValue } from "./json-value.ts";
import { FIXED_COLUMNS, type FieldNode, type ScalarType } from "./schema-model.ts";

/**
 * Does a source schema already cover an event, so that `widenSchema` would change nothing?
 * Every loader asks this first and widens only the events it answers false for. Answers without allocating, which matters at a million events per load: widening
 * allocates paths and observations for every field of every event, while almost every event
 * of a load has a shape the schema already covers. Mirrors the rules of infer-schema.ts
 * (a test holds the two together): a new non-null field (an empty array too), a scalar of a wider
 * type, an array of no type yet meeting elements, or any kind conflict is not covered.
 */
export function schemaCoversEvent(fields: Record<string, FieldNode>, body: JsonObject): boolean {
  for (const key in body) {
    if (Object.hasOwn(FIXED_COLUMNS, key)) continue;
    const value = body[key]!;
    // a top-level records field takes an object as its one element (infer-schema's `widen`)
    if (isJsonObject(value) && Object.hasOwn(fields, key) && fields[key]!.kind === "records") {
      if (!coversObject(fields[key]!.fields ?? {}, value)) return false;
    } else if (!coversField(fields, key, value)) return false;
  }
  return true;
}

function coversObject(fields: Record<string, FieldNode>, obj: JsonObject): boolean {
  for (const key in obj) {
    if (!coversField(fields, key, obj[key]!)) return false;
  }
  return true;
}

function scalarTypeOf(value: string | number | bigint | boolean): ScalarType {
  if (typeof value === "string") return "STRING";
  if (typeof value === "boolean") return "BOOL";
  return isInt64Number(value) ? "INT64" : "FLOAT64";
}

/** `widenScalar(have, seen) === have` */
function scalarCovers(have: ScalarType, seen: ScalarType): boolean {
  return have === seen || have === "STRING" || (have === "FLOAT64" && seen === "INT64");
}

const EMPTY = 0;
const RECORDS = 1;
const SCALARS = 2;

/** Kind of an array as infer-schema observes it; for SCALARS, whether `type` covers its elements. */
function arrayKind(value: JsonValue[], type: ScalarType | undefined): { kind: number; covered: boolean } {
  let objects = 0;
  let others = 0;
  let covered = true;
  for (const el of value) {
    if (el === null) continue;
    if (isJsonObject(el)) objects++;
    else {
      others++;
      if (type === undefined || !scalarCovers(type, Array.isArray(el) ? "STRING" : scalarTypeOf(el)))
        covered = false;
    }
  }
  if (objects === 0 && others === 0) return { kind: EMPTY, covered: true };
  if (others === 0) return { kind: RECORDS, covered: true };
  // objects mixed with scalars are kept as text
  return { kind: SCALARS, covered: objects > 0 ? type === "STRING" : covered };
}

function coversField(fields: Record<string, FieldNode>, key: string, value: JsonValue): boolean {
  if (value === null) return true;
  const node = Object.hasOwn(fields, key) ? fields[key] : undefined;
  if (Array.isArray(value)) {
    // an array of no type yet (only empty ones seen) covers only empty arrays
    const seen = arrayKind(value, node?.kind === "array" ? node.type : undefined);
    if (node === undefined) return false;
    if (node.kind === "records") {
      if (seen.kind === EMPTY) return true;
      if (seen.kind !== RECORDS) return false;
      for (const el of value) {
        if (isJsonObject(el) && !coversObject(node.fields ?? {}, el)) return false;
      }
      return true;
    }
    if (node.kind === "array") return seen.kind === EMPTY || (seen.kind === SCALARS && seen.covered);
    // a scalar meeting an array (even an empty one) becomes STRING; a record meeting one, too
    return node.kind === "scalar" && (node.type ?? "STRING") === "STRING";
  }
  if (node === undefined) return false;
  if (typeof value === "object") {
    if (node.kind === "record") return coversObject(node.fields ?? {}, value);
    // an object is a records field's one element, once the field is marked as meeting objects
    if (node.kind === "records") return node.objects === true && coversObject(node.fields ?? {}, value);
    return node.kind === "scalar" && (node.type ?? "STRING") === "STRING";
  }
  return node.kind === "scalar" && scalarCovers(node.type ?? "STRING", scalarTypeOf(value));
}
