import { createHash } from "node:crypto";
import { isJsonObject, type JsonValue } from "./json-value.ts";

/**
 * The id of an event sent without one, derived from what was sent: the same event retried (by a
 * shipper whose first request timed out after the commit) gets the same id and is deduplicated.
 * SHA-256 over the source name and the event's canonical JSON (object keys sorted, so a shipper
 * that re-serialises in another key order still sends "the same event"), written as a UUID of
 * version 8 (RFC 9562: vendor-specific) so it looks like every other id. The event's own
 * `timestamp`, when sent, is part of its JSON; a defaulted load time is not, so a retry of an event
 * without a timestamp keeps its id.
 */
export function contentEventId(source: string, body: JsonValue): string {
  const hash = createHash("sha256");
  hash.update(source);
  hash.update("\n");
  hash.update(canonicalJsonText(body));
  return uuidOf(hash.digest());
}

/**
 * The ids derived for the events of one request, each repeat of an event's content numbered: the
 * first gets `contentEventId`, the k-th repeat an id derived from that and k. Identical events in
 * one request are distinct log lines — Supabase's kong sink sends nginx's access line with its
 * second-resolution time, so the same request made twice in a second is the same event twice —
 * and were stored once while the answer counted them all; a retry of the request sends the same
 * events in the same order, so it carries the same ids and still stores nothing twice.
 */
export class RequestEventIds {
  private readonly seen = new Map<string, number>();

  /** the id of the next event without one of `source`, sent as `body` */
  derive(source: string, body: JsonValue): string {
    const id = contentEventId(source, body);
    const repeat = this.seen.get(id) ?? 0;
    this.seen.set(id, repeat + 1);
    return repeat === 0 ? id : repeatedEventId(id, repeat);
  }
}

/** the id of the `repeat`-th (1-based) repeat in its request of the event whose id is `first` */
function repeatedEventId(first: string, repeat: number): string {
  return uuidOf(createHash("sha256").update(`${first}\n#${repeat}`).digest());
}

/** a SHA-256 digest as a UUID of version 8 (RFC 9562: vendor-specific) */
function uuidOf(bytes: Buffer): string {
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex", 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** JSON text with object keys in code-unit order at every depth; integers beyond 2^53 exact. */
export function canonicalJsonText(value: JsonValue): string {
  if (value === null || typeof value !== "object") {
    return typeof value === "bigint" ? value.toString() : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJsonText).join(",")}]`;
  if (!isJsonObject(value)) return "null";
  const keys = Object.keys(value).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ",";
    out += JSON.stringify(key) + ":" + canonicalJsonText(value[key]!);
  }
  return out + "}";
}
