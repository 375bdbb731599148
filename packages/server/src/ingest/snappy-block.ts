import { QesError } from "@qes/core";

/**
 * The most a block of `bytes` takes compressed (snappy's `MaxCompressedLength`): a body that does
 * not compress grows by a sixth at most, and the compressed side is bounded by this, as gzip's by
 * zlib's `compressBound`.
 */
export function snappyCompressedBound(bytes: number): number {
  return 32 + bytes + Math.floor(bytes / 6);
}

/**
 * One block of snappy's raw format (google/snappy format_description.txt) decoded: what Vector's
 * `compression: snappy` (src/sinks/util/snappy.rs, `snap::raw::Encoder`) and Fluent Bit's
 * `compress snappy` (flb_snappy.c, `snappy_compress`) send as `Content-Encoding: snappy` — a
 * block, not the framing format. The length the block declares is checked against `maxBytes`
 * before anything is allocated (past it, `tooLarge()`), and every element against the input and
 * what was written, so a hostile block allocates no more than the limit and reads nothing outside
 * its own output.
 */
export function decodeSnappyBlock(input: Uint8Array, maxBytes: number, tooLarge: () => Error): Buffer {
  let pos = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= input.length || shift > 28)
      throw corrupt("the length it begins with is cut short or too long");
    const byte = input[pos++]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  if (length > maxBytes) throw tooLarge();
  const out = Buffer.allocUnsafe(length);
  let written = 0;
  while (pos < input.length) {
    const tag = input[pos++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let size = tag >>> 2;
      if (size >= 60) {
        const lengthBytes = size - 59;
        if (pos + lengthBytes > input.length) throw corrupt("a literal's length is cut short");
        size = 0;
        for (let i = 0; i < lengthBytes; i++) size += input[pos + i]! * 2 ** (8 * i);
        pos += lengthBytes;
      }
      size += 1;
      if (pos + size > input.length || written + size > length) {
        throw corrupt("a literal runs past the data or past the length declared");
      }
      out.set(input.subarray(pos, pos + size), written);
      pos += size;
      written += size;
      continue;
    }
    let size: number;
    let offset: number;
    if (kind === 1) {
      if (pos + 1 > input.length) throw corrupt("a copy is cut short");
      size = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | input[pos]!;
      pos += 1;
    } else if (kind === 2) {
      if (pos + 2 > input.length) throw corrupt("a copy is cut short");
      size = 1 + (tag >>> 2);
      offset = input[pos]! | (input[pos + 1]! << 8);
      pos += 2;
    } else {
      if (pos + 4 > input.length) throw corrupt("a copy is cut short");
      size = 1 + (tag >>> 2);
      offset =
        (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > written || written + size > length) {
      throw corrupt("a copy reaches before the start or past the length declared");
    }
    if (offset >= size) {
      out.copyWithin(written, written - offset, written - offset + size);
    } else {
      // an overlapping copy repeats the last `offset` bytes: byte by byte, as the format means it
      for (let i = 0; i < size; i++) out[written + i] = out[written - offset + i]!;
    }
    written += size;
  }
  if (written !== length) throw corrupt(`it holds ${written} bytes, not the ${length} it declares`);
  return out;
}

function corrupt(reason: string): QesError {
  return new QesError(
    "invalid_parameter",
    `The body is not valid snappy data (Content-Encoding: snappy): ${reason}. Send one block of snappy's raw format.`,
    { param: "Content-Encoding" },
  );
}
