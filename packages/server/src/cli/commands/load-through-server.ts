import { isQesError, parseEvent } from "@qes/core";
import { type BoundedAnswer, postBounded } from "../bounded-post.ts";
import { ndjsonLines } from "../ndjson-lines.ts";
import { retryWait } from "../retry-after-wait.ts";
import { CliError, count, serverText } from "../terminal.ts";

/** NDJSON bytes per request: well under the 10 MiB default of QES_INGEST_MAX_BYTES */
const CHUNK_BYTES = 1024 * 1024;
/** attempts per chunk when the server is busy (429) or briefly unreachable */
const ATTEMPTS = 30;
/**
 * How long a request waits for its whole answer: twice Vector's default request timeout (a qes
 * server commits a chunk in well under a second, and answers 429 at once when its queue is full).
 * Not retried: a server that holds a request this long is not briefly unreachable.
 */
const ANSWER_WITHIN_MS = 120_000;
/** the most of an answer read: a qes ingest answer or error is well under a kilobyte */
const ANSWER_MAX_BYTES = 1024 * 1024;

export interface ServerTarget {
  /** `http://host:port` of a running qes */
  url: string;
  /** an ingest token */
  token: string;
  /**
   * The server's URL and token as found now (the file beside the database), read again when the
   * server stops answering or refuses the token: a load follows a server restarted meanwhile (a
   * new port, a new token). Absent for `--url`.
   */
  reread?: () => Promise<{ url: string; token: string } | undefined>;
  /** how long one request waits for its answer (default ANSWER_WITHIN_MS; tests shorten it) */
  answerWithinMs?: number;
}

export interface ForwardSummary {
  events: number;
  seconds: number;
}

/**
 * `qes load` through a running server's ingest API (`POST /api/logs`, NDJSON): used when a
 * `qes serve` holds the DuckDB file, or with `--url`. A file is checked whole first, so a
 * malformed line refuses the whole file before anything is sent (standard input cannot be read
 * twice: there a malformed line refuses its chunk and the chunks before it stay stored). Chunks
 * are retried on 429 (after `Retry-After`, at most a minute: retry-after-wait.ts) and on
 * connection errors; a retry stores nothing twice (ids are given or derived from the content).
 */
export async function loadThroughServer(
  target: ServerTarget,
  source: string,
  file: string,
  onProgress: (events: number) => void,
): Promise<ForwardSummary> {
  const started = performance.now();
  if (file !== "-") await checkFile(file, source);
  let events = 0;
  let chunk: string[] = [];
  /** the file's line number of each event of the chunk, to name a refused one */
  let lines: number[] = [];
  let chunkBytes = 0;
  let lineNumber = 0;
  const limit: RequestLimit = { events: Number.POSITIVE_INFINITY };
  const send = async () => {
    if (chunk.length === 0) return;
    try {
      await postEvents(target, source, chunk, lines, limit, (n) => {
        events += n;
      });
    } catch (e) {
      throw events > 0 && e instanceof CliError ? new CliError(`${e.message}\n${storedBefore(events)}`) : e;
    }
    onProgress(events);
    chunk = [];
    lines = [];
    chunkBytes = 0;
  };
  try {
    for await (const line of ndjsonLines(file)) {
      lineNumber++;
      if (line.trim() === "") continue;
      lines.push(lineNumber);
      chunk.push(line);
      chunkBytes += Buffer.byteLength(line) + 1;
      if (chunkBytes >= CHUNK_BYTES) await send();
    }
  } catch (e) {
    // a line the reader refuses (not UTF-8) on standard input, after chunks were sent: "nothing
    // was sent" would be false
    if (events > 0 && isQesError(e) && e.line !== undefined)
      throw new CliError(`line ${e.line}: ${e.message.replace(/^line \d+: /, "")}\n${storedBefore(events)}`);
    throw e;
  }
  await send();
  return { events, seconds: (performance.now() - started) / 1000 };
}

/**
 * What a load refused by the server part-way leaves: the requests before the refused one are
 * committed (the server checks a widening against its stored queries, which the check of the file
 * before sending, syntax only, cannot), so "nothing was stored" would be false.
 */
function storedBefore(events: number): string {
  return (
    `${count(events)} events before it were stored (each request is all-or-nothing, not the whole file, ` +
    "when the server refuses a line); loading the file again once fixed stores nothing twice"
  );
}

async function checkFile(file: string, source: string): Promise<void> {
  let n = 0;
  for await (const line of ndjsonLines(file)) {
    n++;
    // throws QesError('invalid_event', …, {line}) as a local load would
    parseEvent(line, n, 0n, source);
  }
}

/** the most events one request may carry, learnt from the server's 413s */
interface RequestLimit {
  events: number;
}

/**
 * Posts a chunk in requests of at most `limit.events` events. A server whose
 * `QES_INGEST_MAX_BYTES` or `QES_INGEST_QUEUE_EVENTS` is below what a chunk holds answers 413;
 * the chunk is then sent in halves (and the rest of the load at that size), so a load fits any
 * server's limits. Only one event the server refuses as too large fails the load.
 */
async function postEvents(
  target: ServerTarget,
  source: string,
  lines: string[],
  lineNumbers: readonly number[],
  limit: RequestLimit,
  committed: (events: number) => void,
): Promise<void> {
  for (let start = 0; start < lines.length; ) {
    const end = Math.min(lines.length, start + limit.events);
    const part = lines.slice(start, end);
    const numbers = lineNumbers.slice(start, end);
    if ((await postChunk(target, source, part, numbers)) === "too_large") {
      limit.events = Math.ceil(part.length / 2);
      continue;
    }
    committed(part.length);
    start = end;
  }
}

async function postChunk(
  target: ServerTarget,
  source: string,
  lines: string[],
  lineNumbers: readonly number[],
): Promise<"too_large" | undefined> {
  const body = `${lines.join("\n")}\n`;
  for (let attempt = 1; ; attempt++) {
    const url = `${target.url.replace(/\/+$/, "")}/api/logs?source_name=${encodeURIComponent(source)}`;
    let answer: BoundedAnswer;
    try {
      answer = await postBounded(
        url,
        { headers: { "Content-Type": "application/x-ndjson", "X-API-KEY": target.token }, body },
        { withinMs: target.answerWithinMs ?? ANSWER_WITHIN_MS, maxBytes: ANSWER_MAX_BYTES },
      );
    } catch (e) {
      if (attempt >= ATTEMPTS)
        throw new CliError(
          `cannot reach the qes server at ${target.url}: ${e instanceof Error ? e.message : String(e)}`,
        );
      await sleep(Math.min(200 * attempt, 2000));
      await follow(target);
      continue;
    }
    if (answer.kind !== "answer") throw new CliError(unusableAnswer(target, answer));
    const { status, text } = answer;
    if (status >= 200 && status < 300) {
      checkCommitted(target.url, text, lines.length);
      return undefined;
    }
    if (status === 413 && lines.length > 1) return "too_large";
    if ((status === 429 || status === 503) && attempt < ATTEMPTS) {
      const wait = retryWait(answer.retryAfter, target.url);
      if (wait.note !== undefined) process.stderr.write(`qes load: ${wait.note}\n`);
      await sleep(wait.ms);
      continue;
    }
    // the token of a server that has restarted (on the same port) is no longer valid: its new
    // one is in the file beside the database once it has started
    if ((status === 401 || status === 403) && target.reread !== undefined && attempt < ATTEMPTS) {
      await sleep(Math.min(200 * attempt, 2000));
      await follow(target);
      continue;
    }
    throw new CliError(serverRefusal(target.url, status, text, lineNumbers));
  }
}

/**
 * Why an answer that is no answer of a qes server's ends the load. The events of the request may
 * have been committed, or not: loading again stores nothing twice.
 */
function unusableAnswer(target: ServerTarget, answer: Exclude<BoundedAnswer, { kind: "answer" }>): string {
  const unknown =
    "the events of that request may or may not be stored; loading the file again stores nothing twice";
  switch (answer.kind) {
    case "no_answer":
      return `the server at ${target.url} did not answer within ${Math.round((target.answerWithinMs ?? ANSWER_WITHIN_MS) / 1000)} s: ${unknown}`;
    case "too_large":
      return `the server at ${target.url} answered with more than ${ANSWER_MAX_BYTES} bytes, which no qes ingest API sends: not a qes server? ${unknown}`;
    case "redirect":
      return (
        `the server at ${target.url} redirects (${answer.status}) to "${serverText(answer.location ?? "", 200)}": ` +
        "qes load follows no redirect, which would send the ingest token and the events to another address; " +
        "give --url the address of the qes server itself"
      );
  }
}

/** switches to the server the file beside the database names now, if it names a running one */
async function follow(target: ServerTarget): Promise<void> {
  const now = await target.reread?.();
  if (now === undefined) return;
  target.url = now.url;
  target.token = now.token;
}

/**
 * A 200 is a commit only when it is the ingest API's `{"accepted": N}` for every event sent:
 * anything else answering at that URL (another program on a port a stopped server had) would
 * otherwise swallow the events while the load reports them stored.
 */
function checkCommitted(url: string, text: string, events: number): void {
  let accepted: unknown;
  try {
    accepted = (JSON.parse(text) as { accepted?: unknown }).accepted;
  } catch {
    // not JSON: refused below
  }
  if (accepted === events) return;
  throw new CliError(
    `the server at ${url} answered 200 but not as a qes ingest API does (${JSON.stringify(text.slice(0, 80))} ` +
      `instead of {"accepted": ${events}}): not a qes server? The events it was sent may not be stored`,
  );
}

/** the server's message, with an event index turned back into the file's line number */
function serverRefusal(url: string, status: number, text: string, lineNumbers: readonly number[]): string {
  let message: unknown;
  try {
    message = (JSON.parse(text) as { error: { message: unknown } }).error.message;
  } catch {
    // not our error shape (a proxy's HTML page): shown quoted, escaped and cut below
  }
  if (typeof message !== "string")
    return `the qes server at ${url} refused the events (${status}): "${serverText(text)}"`;
  const m = /^event (\d+)(?: \(line \d+\))?: /.exec(message);
  const line = m ? lineNumbers[Number(m[1])] : undefined;
  const located = m && line !== undefined ? `line ${line}: ${message.slice(m[0].length)}` : message;
  return `the qes server at ${url} refused the events (${status}): ${serverText(located, 2000)}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
