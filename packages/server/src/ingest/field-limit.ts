import { type FieldNode, QesError } from "@qes/core";
import type { Widening } from "./schema-widenings.ts";

/**
 * `QES_INGEST_MAX_FIELDS`: every new field of a source becomes a column (or a path in one), added
 * while the writer waits. One 10 MB body of distinct keys held DuckDB's writer for 93 s adding
 * 7,700 columns, and PostgreSQL stops at 1,600 columns per table. So a request whose events would
 * take a source past the limit is refused with 400 `invalid_event` naming the first such event,
 * before anything is queued, and again at commit over the fields the requests committed before it
 * brought (ingest/batch-admission.ts). Instances ingesting into one PostgreSQL at once may pass it
 * by a few.
 */
export function checkFieldLimit(source: string, widenings: readonly Widening[], maxFields: number): void {
  for (const { index, after } of widenings) {
    const fields = countFields(after.fields);
    if (fields > maxFields) {
      throw new QesError(
        "invalid_event",
        `event ${index}: source ${JSON.stringify(source)} would hold ${fields} fields, more than ` +
          `QES_INGEST_MAX_FIELDS (${maxFields}) allows. Send fewer distinct keys (put variable ones ` +
          "in an array of records, or in a string), or raise the limit.",
      );
    }
  }
}

/** every field at every depth: records and the fields inside them */
function countFields(fields: Readonly<Record<string, FieldNode>>): number {
  let n = 0;
  for (const node of Object.values(fields)) n += 1 + (node.fields ? countFields(node.fields) : 0);
  return n;
}
