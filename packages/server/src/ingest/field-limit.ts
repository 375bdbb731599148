import {
  FieldLimitError,
  type FieldNode,
  type JsonObject,
  type QesError,
  type SchemaChange,
  type SourceSchema,
  widenSchema,
} from "@qes/core";
import { eventRefusal } from "./event-refusal.ts";
import type { Widening } from "./schema-widenings.ts";

/**
 * `QES_INGEST_MAX_FIELDS`: every new field of a source becomes a column (or a path in one), added
 * while the writer waits. One 10 MB body of distinct keys held DuckDB's writer for 93 s adding
 * 7,700 columns, and PostgreSQL stops at 1,600 columns per table. So a request whose events would
 * take a source past the limit is refused with 400 `invalid_event` naming the first such event,
 * before anything is queued, and again at commit over the fields the requests committed before it
 * brought (ingest/batch-admission.ts). Instances ingesting into one PostgreSQL at once may pass it
 * by a few.
 *
 * Widens `after` (a copy of the source's schema) by event `index` with core's `widenSchema`, which
 * counts the fields as it makes them and stops early: widening every key of an event of 600,000
 * keys, only to count them and refuse, held the server's thread for seconds. A source past a
 * limit lowered since keeps taking what adds no field (a retype).
 */
export function widenWithinFieldLimit(
  after: SourceSchema,
  body: JsonObject,
  maxFields: number,
  source: string,
  index: number,
  line: number | undefined,
): SchemaChange[] {
  try {
    return widenSchema(after, body, maxFields);
  } catch (e) {
    if (e instanceof FieldLimitError) throw fieldLimitRefusal(source, index, line, maxFields);
    throw e;
  }
}

/** A widening step's new field names, each at most MAX_FIELD_NAME_BYTES: 400 naming the event. */
export function checkFieldNames(widening: Widening): void {
  const { index, line, before, after } = widening;
  const long = newLongName(before.fields, after.fields);
  if (long !== undefined) {
    throw eventRefusal(
      index,
      line,
      `field name ${JSON.stringify(`${long.slice(0, 40)}…`)} is ${Buffer.byteLength(long)} bytes long; ` +
        `a field name may be at most ${MAX_FIELD_NAME_BYTES} bytes. Send long text as a value, not as a key.`,
    );
  }
}

function fieldLimitRefusal(
  source: string,
  index: number,
  line: number | undefined,
  maxFields: number,
): QesError {
  return eventRefusal(
    index,
    line,
    `source ${JSON.stringify(source)} would hold more than ${maxFields} fields, ` +
      `the most QES_INGEST_MAX_FIELDS (${maxFields}) allows. Send fewer distinct keys (put variable ` +
      "ones in an array of records, or in a string), or raise the limit.",
  );
}

/**
 * Longest field name a source may take through ingest. A source's schema holds every name, and is
 * copied, compared and saved whole at each widening: six fields of 2.5 MB names made each later
 * commit of the source take 10 s, the limit on the number of fields notwithstanding.
 */
export const MAX_FIELD_NAME_BYTES = 1024;

/** a name in `after` and not in `before`, at any depth, longer than MAX_FIELD_NAME_BYTES */
function newLongName(
  before: Readonly<Record<string, FieldNode>> | undefined,
  after: Readonly<Record<string, FieldNode>>,
): string | undefined {
  for (const [name, node] of Object.entries(after)) {
    const was = before !== undefined && Object.hasOwn(before, name) ? before[name] : undefined;
    if (
      was === undefined &&
      name.length * 3 > MAX_FIELD_NAME_BYTES &&
      Buffer.byteLength(name) > MAX_FIELD_NAME_BYTES
    ) {
      return name;
    }
    const inner = node.fields ? newLongName(was?.fields, node.fields) : undefined;
    if (inner !== undefined) return inner;
  }
  return undefined;
}
