import { QesError } from "@qes/core";
import { uncompressSync } from "snappy";

/**
 * The most a block of `bytes` takes compressed (snappy's `MaxCompressedLength`): a body that does
 * not compress grows by a sixth at most, and the compressed side is bounded by this, as gzip's by
 * zlib's `compressBound`.
 */
export function snappyCompressedBound(bytes: number): number {
  return 32 + bytes + Math.floor(bytes / 6);
}

/**
 * One block of snappy's raw format decoded (the `snappy` package: Rust's `snap`): what Vector's
 * `compression: snappy` (src/sinks/util/snappy.rs, `snap::raw::Encoder`) and Fluent Bit's
 * `compress snappy` (flb_snappy.c, `snappy_compress`) send as `Content-Encoding: snappy` — a
 * block, not the framing format. The length a block begins with (a varint: google/snappy
 * format_description.txt) is read here first and checked against `maxBytes` (past it,
 * `tooLarge()`), so a hostile block is refused before the decoder allocates its output; the
 * decoder itself refuses a block whose content does not make exactly that length.
 */
export function decodeSnappyBlock(input: Uint8Array, maxBytes: number, tooLarge: () => Error): Buffer {
  if (declaredLength(input) > maxBytes) throw tooLarge();
  try {
    return uncompressSync(Buffer.from(input.buffer, input.byteOffset, input.byteLength), {
      asBuffer: true,
    }) as Buffer;
  } catch (e) {
    throw corrupt(e instanceof Error ? e.message.replace(/^snappy: /, "") : String(e));
  }
}

/** the uncompressed length a block declares: its leading varint (at most 32 bits) */
function declaredLength(input: Uint8Array): number {
  let length = 0;
  for (let pos = 0, shift = 0; shift <= 28; pos++, shift += 7) {
    if (pos >= input.length) break;
    const byte = input[pos]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return length;
  }
  throw corrupt("the length it begins with is cut short or too long");
}

function corrupt(reason: string): QesError {
  return new QesError(
    "invalid_parameter",
    `The body is not valid snappy data (Content-Encoding: snappy): ${reason}. Send one block of snappy's raw format.`,
    { param: "Content-Encoding" },
  );
}
