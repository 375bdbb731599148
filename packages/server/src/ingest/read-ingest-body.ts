import type { IncomingMessage } from "node:http";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createInflate } from "node:zlib";
import { QesError } from "@qes/core";
import type { BodyReservation } from "./body-budget.ts";
import { decodeSnappyBlock, snappyCompressedBound } from "./snappy-block.ts";

/**
 * A body that sends nothing for this long, or is not complete this long after it began, is
 * dropped (its connection closed): what it holds counts against the bodies read at once
 * (body-budget.ts), and a client that stalls mid-body must not keep everyone else's refused.
 * 60 s is Vector's own default request timeout: a shipper has given up on such a request by then.
 */
const BODY_IDLE_MS = 10_000;
const BODY_DEADLINE_MS = 60_000;

/**
 * The body of an ingest request, decompressed (`Content-Encoding: gzip`, `deflate`, `snappy` or
 * none) and refused with 413 `request_too_large` as soon as it passes `maxBytes` after
 * decompression. The limit is enforced on the decompressor's output as it is produced, so a small
 * gzip bomb stops after `maxBytes` were inflated and never allocates more than that; a snappy
 * block declares its length first, and is refused by it before it is decoded.
 */
export async function readIngestBody(
  req: IncomingMessage,
  maxBytes: number,
  reservation?: BodyReservation,
): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  const encoding = contentEncoding(req.headers["content-encoding"]);
  // a plain body longer than the limit is refused before reading it
  if (encoding === "identity" && Number.isFinite(declared) && declared > maxBytes) {
    discardRest(req);
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let received = 0;
  // the compressed side is bounded too (empty gzip members would otherwise stream forever), by
  // the most a body within the limit takes compressed: a body that does not compress (level 0,
  // random bytes) is a little larger compressed, and was refused at the limit itself although it
  // inflates to no more than the limit
  const maxReceived =
    encoding === "identity"
      ? maxBytes
      : encoding === "snappy"
        ? snappyCompressedBound(maxBytes)
        : compressedBound(maxBytes);
  // a snappy block is decoded whole once read: what is collected is the compressed bytes
  const maxCollected = encoding === "snappy" ? maxReceived : maxBytes;
  const stalled = () => req.socket.destroy();
  const idle = setTimeout(stalled, BODY_IDLE_MS);
  const deadline = setTimeout(stalled, BODY_DEADLINE_MS);
  const countReceived = new Transform({
    transform(chunk: Buffer, _enc, done) {
      idle.refresh();
      received += chunk.length;
      done(
        received <= maxReceived
          ? undefined
          : encoding === "identity"
            ? tooLarge(maxBytes)
            : compressedTooLarge(maxReceived, maxBytes),
        chunk,
      );
    },
  });
  const collect = new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      if (total > maxCollected) {
        done(tooLarge(maxBytes));
        return;
      }
      try {
        reservation?.take(chunk.length);
      } catch (e) {
        done(e as Error);
        return;
      }
      chunks.push(chunk);
      done();
    },
  });
  const stages =
    encoding === "gzip"
      ? [createGunzip({ chunkSize: 64 * 1024 })]
      : encoding === "deflate"
        ? [createInflate({ chunkSize: 64 * 1024 })]
        : [];
  try {
    // req.pipe, not pipeline(req, …): a refusal must not destroy the request's socket, or the
    // client would see a reset instead of the 413 or 400
    const done = pipeline([countReceived, ...stages, collect]);
    // when the client aborts first, the pipeline's own failure has nobody else to hear it
    done.catch(() => undefined);
    let onAbort: ((e: Error) => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = reject;
    });
    const abort = () =>
      onAbort?.(Object.assign(new Error("aborted"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    req.once("error", abort);
    req.once("aborted", abort);
    req.pipe(countReceived);
    try {
      await Promise.race([done, aborted]);
    } finally {
      req.off("error", abort);
      req.off("aborted", abort);
      clearTimeout(idle);
      clearTimeout(deadline);
    }
  } catch (e) {
    req.unpipe(countReceived);
    discardRest(req);
    if (e instanceof QesError) throw e;
    if ((e as NodeJS.ErrnoException).code?.startsWith("Z_")) {
      throw new QesError(
        "invalid_parameter",
        `The body is not valid ${encoding} data (Content-Encoding: ${encoding}).`,
        { param: "Content-Encoding" },
      );
    }
    if ((e as NodeJS.ErrnoException).code === "ERR_STREAM_PREMATURE_CLOSE") {
      throw Object.assign(new Error("the client closed the request"), { name: "AbortError" });
    }
    throw e;
  }
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
  if (encoding !== "snappy") return body;
  const decoded = decodeSnappyBlock(body, maxBytes, () => tooLarge(maxBytes));
  reservation?.take(decoded.length);
  return decoded;
}

/**
 * Reads and drops what the client still sends after a refusal, so that it reads the answer:
 * closing a socket whose peer is still sending resets the connection, and the client (Node's fetch
 * among them) then reports ECONNRESET or EPIPE instead of the 413 or 400 it was sent — every time,
 * for a plain body only 5 % past the limit. Dropped bytes cost no memory, so what bounds this is
 * time, as for a body that is read: a client that sends nothing for BODY_IDLE_MS, or is still
 * sending BODY_DEADLINE_MS after the refusal (a stream without end), has its connection closed.
 * Only while this request's body is still coming: a body that arrived whole before its refusal
 * (the read budget's 429 of a gzip body, one that does not inflate) had ended already, so the
 * timers were never cleared, and 10 s later closed the connection — kept alive by then for the
 * client's next request, which got no answer (7 to 13 requests a run of bench/ingest-flood.ts
 * with gzip bodies).
 */
function discardRest(req: IncomingMessage): void {
  req.resume();
  if (req.complete) return;
  const stop = () => {
    if (!req.complete) req.socket.destroy();
  };
  const idle = setTimeout(stop, BODY_IDLE_MS).unref();
  const deadline = setTimeout(stop, BODY_DEADLINE_MS).unref();
  const done = () => {
    clearTimeout(idle);
    clearTimeout(deadline);
  };
  req.on("data", () => idle.refresh());
  req.once("end", done);
  req.once("close", done);
}

type Encoding = "identity" | "gzip" | "deflate" | "snappy";

/** the content codings read, as a 415's `Accept-Encoding` lists them */
const READ_ENCODINGS = ["gzip", "deflate", "snappy", "identity"] as const;

/**
 * The body's content coding. Any other is 415 `unsupported_media_type` (RFC 9110 §15.5.16, with
 * `Accept-Encoding`), naming the shippers' settings that send a coding read here: Vector's
 * `compression: zstd` and Fluent Bit's `compress zstd` send one Node 20's zlib cannot read, and
 * they were told 400 `invalid_parameter`, as if a value of theirs were wrong rather than the
 * server unable.
 */
function contentEncoding(header: string | undefined): Encoding {
  const value = (header ?? "").trim().toLowerCase();
  if (value === "" || value === "identity") return "identity";
  if (value === "gzip" || value === "x-gzip") return "gzip";
  if (value === "deflate") return "deflate";
  if (value === "snappy") return "snappy";
  throw new QesError(
    "unsupported_media_type",
    `Content-Encoding "${value.slice(0, 40)}" is not supported: send gzip, deflate (zlib), snappy or an ` +
      "uncompressed body (Vector: compression gzip, zlib or snappy; Fluent Bit: compress gzip or snappy; " +
      "Logstash: http_compression).",
    { param: "Content-Encoding", allowed: READ_ENCODINGS },
  );
}

/**
 * zlib's `compressBound` (deflate's stored blocks cost 5 bytes per 64 KiB, its encoders fall back to
 * them when compressing would grow the data) plus the gzip wrapper's 18 bytes.
 */
function compressedBound(maxBytes: number): number {
  return maxBytes + (maxBytes >> 12) + (maxBytes >> 14) + (maxBytes >> 25) + 13 + 18;
}

function compressedTooLarge(maxReceived: number, maxBytes: number): QesError {
  return new QesError(
    "request_too_large",
    `The compressed ingest body is larger than ${maxReceived} bytes, more than any body of at most ${maxBytes} ` +
      "bytes (QES_INGEST_MAX_BYTES) takes compressed; send smaller batches.",
  );
}

function tooLarge(maxBytes: number): QesError {
  return new QesError(
    "request_too_large",
    `The ingest body is larger than ${maxBytes} bytes after decompression (QES_INGEST_MAX_BYTES); send smaller batches.`,
  );
}
