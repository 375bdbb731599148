/**
 * A request body as Vector's `http` sink writes it with `encoding.codec: json` and the default
 * framing (src/sinks/http/encoder.rs): `[`, each event's JSON joined by `,`, `]`. A log event is a
 * BTreeMap, so serde_json writes every object's keys in byte order; its timestamps were written as
 * RFC 3339 strings (`SecondsFormat::AutoSi`) before they come here.
 */
export function vectorJsonBody(events: readonly unknown[]): string {
  return `[${events.map((e) => JSON.stringify(sortedKeys(e))).join(",")}]`;
}

/** `framing.method: newline_delimited`: one event per line, the last newline removed */
export function vectorNdjsonBody(events: readonly unknown[]): string {
  return events.map((e) => JSON.stringify(sortedKeys(e))).join("\n");
}

/**
 * Vector's `estimated_json_encoded_size_of` (lib/vector-core/src/event/estimated_json_encoded_size_of.rs),
 * by which its batcher fills `batch.max_bytes`: the JSON text's size, except that a string counts
 * its UTF-8 bytes and two quotes — escapes (`\"`, `\\`, `\n`) are not counted.
 */
export function vectorEstimatedSize(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === "string") return Buffer.byteLength(value) + 2;
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value).length;
  if (Array.isArray(value)) {
    return 2 + value.reduce((n: number, v) => n + vectorEstimatedSize(v), 0) + Math.max(0, value.length - 1);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  return (
    2 +
    entries.reduce((n, [k, v]) => n + Buffer.byteLength(k) + 2 + 1 + vectorEstimatedSize(v), 0) +
    Math.max(0, entries.length - 1)
  );
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** the headers Vector's `http` sink sends with `codec: json` and `request.headers.x-api-key` */
export function vectorHeaders(token: string, compression?: "gzip" | "deflate"): Record<string, string> {
  return {
    "Content-Type": "application/json",
    ...(compression === undefined ? {} : { "Content-Encoding": compression }),
    "Accept-Encoding": "zstd,gzip,deflate,br",
    "User-Agent": "Vector/0.43.1 (x86_64-unknown-linux-gnu 5b8e7a8 2024-12-12 11:54:27.213637925)",
    "X-API-KEY": token,
  };
}
