/** A cached response: its serialised body, when it was produced, and the row-limit flag. */
export interface CacheEntry {
  /** `{"result": [...]}` as sent, redacted when the key says so */
  body: Buffer;
  /** wall-clock ms when the query that produced it finished (the `Age` header counts from it) */
  storedAtMs: number;
  rowLimitReached: boolean;
}

const HEADER_BYTES = 9;

/** one Redis value: 8 bytes of `storedAtMs` (float64 BE), 1 byte of flags, then the body */
export function encodeEntry(entry: CacheEntry): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + entry.body.length);
  out.writeDoubleBE(entry.storedAtMs, 0);
  out.writeUInt8(entry.rowLimitReached ? 1 : 0, 8);
  entry.body.copy(out, HEADER_BYTES);
  return out;
}

/** undefined for a value this version did not write */
export function decodeEntry(value: Buffer): CacheEntry | undefined {
  if (value.length < HEADER_BYTES) return undefined;
  const storedAtMs = value.readDoubleBE(0);
  if (!Number.isFinite(storedAtMs)) return undefined;
  return {
    storedAtMs,
    rowLimitReached: (value.readUInt8(8) & 1) === 1,
    body: value.subarray(HEADER_BYTES),
  };
}

/** whole seconds since the entry was produced, never negative (clocks of two instances differ) */
export function ageSeconds(entry: CacheEntry, nowMs = Date.now()): number {
  return Math.max(0, Math.floor((nowMs - entry.storedAtMs) / 1000));
}
