import type { Readable } from "node:stream";
import { MAX_RESULT_BYTES, QesError } from "@qes/core";

/** what a server writes into the body when a query fails after its first rows were sent */
const EXCEPTION = /Code: \d+\. DB::Exception/;

/**
 * The rows of a JSONCompactEachRow body, read with a bound on its size.
 *
 * The client's own `ResultSet.json()` turns each row's bytes into a string inside a stream
 * transform: a row longer than V8's longest string (consumer SQL aggregating half a gigabyte of
 * text, e.g. `string_agg` over a generated array) threw there, outside any promise, and the
 * uncaught exception ended the process (issue 12: no request inside the limits may do more than
 * fail). Here the body is counted as it arrives and refused as a 422 past `maxBytes`.
 */
export async function readResultRows(
  body: Readable,
  maxBytes: number = MAX_RESULT_BYTES,
): Promise<unknown[][]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > maxBytes) {
      body.destroy();
      throw new QesError(
        "sql_invalid",
        `the query's result is larger than the service returns (${Math.round(maxBytes / 1024 / 1024)} MB): select fewer rows or shorter values`,
      );
    }
    chunks.push(bytes);
  }
  const text = Buffer.concat(chunks, size).toString("utf8");
  const rows: unknown[][] = [];
  let at = 0;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end === -1) end = text.length;
    if (end > at) {
      const line = text.slice(at, end);
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch (e) {
        // the engine's error, written after the rows it had sent: thrown as the engine's error
        const failed = EXCEPTION.exec(text.slice(at));
        if (failed) throw new Error(text.slice(at + failed.index).trim());
        throw e;
      }
      if (!Array.isArray(row)) {
        // a server writes a late error as a row of its own: {"exception": "Code: …"}
        const exception = (row as { exception?: unknown } | null)?.exception;
        throw new Error(
          typeof exception === "string" ? exception : `unexpected result row: ${line.slice(0, 200)}`,
        );
      }
      rows.push(row);
    }
    at = end + 1;
  }
  return rows;
}
