import { createRequire } from "node:module";
import { TextDecoder } from "node:util";

/**
 * Makes @duckdb/node-api read VARCHAR values whole. It decodes every one with a single shared
 * `new TextDecoder()`, whose default drops a leading U+FEFF (byte order mark): a value or id that
 * began with one was read back without it, unlike on the other backends, and ingest's check of the
 * ids a source already stores (duckdb-stored-ids.ts) then missed them, so an event with such an
 * id was stored again at every retry. The library reads that decoder from its module's exports
 * at each call; it is replaced there, once, by one that keeps the mark. Idempotent.
 */
export function keepLeadingByteOrderMarks(): void {
  const accessors = createRequire(import.meta.url)("@duckdb/node-api/lib/vectors/dataAccessors.js") as {
    textDecoder?: TextDecoder;
  };
  if (accessors.textDecoder?.ignoreBOM === true) return;
  if (accessors.textDecoder === undefined) {
    throw new Error(
      "@duckdb/node-api no longer has vectors/dataAccessors.textDecoder: revisit duckdb-varchar-decoder.ts",
    );
  }
  accessors.textDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
}
