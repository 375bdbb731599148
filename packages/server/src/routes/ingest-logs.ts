import type { IngestBatch, LogEvent, LogSchema } from "@qes/core";
import { checkSourceName, QesError } from "@qes/core";
import type { Request, Response } from "express";
import type { ApiKeyVerifier } from "../auth/api-keys.ts";
import { authenticateRequest, authorizeIngest } from "../auth/authenticate.ts";
import type { JwtVerifier } from "../auth/jwt.ts";
import type { Clock } from "../clock.ts";
import type { BatchAdmission } from "../ingest/batch-admission.ts";
import { IngestBodyBudget } from "../ingest/body-budget.ts";
import { boundedBefore, type StoreDays } from "../ingest/day-limit.ts";
import { eventRefusal } from "../ingest/event-refusal.ts";
import { eventCount, type GroupCommitQueue } from "../ingest/group-commit-queue.ts";
import type { IngestWorkers } from "../ingest/ingest-workers.ts";
import { type BodyFormat, bodyFormat } from "../ingest/parse-ingest-body.ts";
import { readIngestBody } from "../ingest/read-ingest-body.ts";
import { requestEvents } from "../ingest/request-events.ts";

/**
 * Decompressed ingest bodies, in units of `QES_INGEST_MAX_BYTES`, read and parsed at once; past
 * them 429 (ingest/body-budget.ts). Parsing is one thread's work: more bodies at once add memory,
 * not speed, and the group commit gathers whatever is parsed meanwhile.
 */
const BODIES_IN_FLIGHT = 4;

export interface IngestLogsDeps {
  verifier: ApiKeyVerifier;
  jwt?: JwtVerifier;
  clock: Clock;
  queue: GroupCommitQueue<LogEvent, IngestBatch>;
  /** `QES_INGEST_MAX_BYTES` */
  ingestMaxBytes: number;
  /** sources, fields and served stored queries a batch may not break (checked again at commit) */
  ingestAdmission: BatchAdmission;
  /** the store's schema */
  schema: () => Promise<LogSchema>;
  /** the days of the past a source always takes on a store that bounds its days (`Backend.sourceDayLimit`) */
  storeDays?: StoreDays;
  /** where bodies are parsed and their rows encoded, when the backend encodes ahead */
  workers?: IngestWorkers;
  /** told where each body was parsed */
  onParsed?: (thread: "worker" | "main") => void;
}

/**
 * `POST /api/logs?source_name=<source>` (DESIGN.md §10): authenticate (401) and authorise the
 * source (403) before reading the body; refuse at once when the queue is full (429); read the
 * body within the limit (413), parse and shape every event (400 `invalid_event` with its index,
 * nothing stored; the same for an event dated more than a day ahead or older than the store holds,
 * a request of too many days or an event whose widening would break a served stored
 * query), then wait for the group commit:
 * `200 {"accepted": N}` only once it is durable.
 */
export function ingestLogsRoute(deps: IngestLogsDeps) {
  const budget = new IngestBodyBudget(BODIES_IN_FLIGHT * deps.ingestMaxBytes);
  return async (req: Request, res: Response): Promise<void> => {
    const query = sourceQuery(req.originalUrl);
    const principal = authenticateRequest(req.headers, query.params, deps.verifier, deps.jwt);
    // refusals are paced per caller from here on (admission/refusal-pacing.ts)
    res.locals.caller = principal.caller;
    const source = query.source;
    checkSourceName(source);
    authorizeIngest(principal, source);
    deps.ingestAdmission.checkSource(await deps.schema(), source);
    const format = bodyFormat(req.headers["content-type"]);
    if (deps.queue.full) {
      req.resume();
      throw deps.queue.busy();
    }
    // the body's bytes count against the budget until its events are the queue's to bound
    const reservation = budget.reserve();
    let committed: Promise<unknown> | undefined;
    let accepted: number;
    let body: Buffer;
    let now: bigint;
    try {
      body = await readIngestBody(req, deps.ingestMaxBytes, reservation);
      now = deps.clock();
      const parsed =
        (await preparedBatch(deps, body, format, source, now)) ??
        (await checkedBatch(deps, body, format, source, now));
      const bound = boundedBefore(now, deps.storeDays);
      const batch = bound === undefined ? parsed : withBound(parsed, bound);
      accepted = eventCount(batch);
      if (accepted > 0) committed = deps.queue.submit(batch, body.length);
    } finally {
      reservation.release();
    }
    try {
      await committed;
    } catch (e) {
      throw withEventLine(e, body, format, source, now, deps.queue.capacity);
    }
    res.json({ accepted });
  };
}

/**
 * `HEAD /api/logs`: 200, nothing read or stored. Vector's `http` sink, given `healthcheck.uri` (it
 * checks nothing without one), sends a HEAD of it at start-up and logs an error for any status but
 * 200 (and stops, under `vector --require-healthy`). It sends none of its configured
 * `request.headers` with it, so an `x-api-key` never comes: the probe asks for no token and tells
 * nothing but that the route is here.
 */
export function ingestProbeRoute() {
  return (_req: Request, res: Response): void => {
    res.status(200).end();
  };
}

/**
 * Any other method on `/api/logs`: 405 `method_not_allowed` with `Allow: POST, HEAD`. A shipper
 * configured with GET (or PUT) was told 404 "Nothing is served at GET /api/logs", which sends
 * its operator looking for a wrong URL instead of the wrong method.
 */
export function ingestOtherMethodsRoute() {
  return (req: Request): never => {
    throw new QesError(
      "method_not_allowed",
      `${req.method} /api/logs is not served: send events with POST (HEAD checks that the route is here).`,
      { allowed: ["POST", "HEAD"] },
    );
  };
}

/**
 * A store's refusal of an event (`QesError.event`) with the event's line, when the body gave its
 * events one per line, as the route's own refusals name it: the store knows the event's index
 * only. The body is parsed again for its lines: on a refusal only, and the events may have been
 * parsed on a worker, which keeps no lines.
 */
function withEventLine(
  e: unknown,
  body: Buffer,
  format: BodyFormat,
  source: string,
  now: bigint,
  maxEvents: number,
): unknown {
  if (!(e instanceof QesError) || e.event === undefined || e.line !== undefined) return e;
  const prefix = `event ${e.event}: `;
  if (!e.message.startsWith(prefix)) return e;
  const line = requestEvents(body, format, source, now, maxEvents).lines?.[e.event];
  return line === undefined ? e : eventRefusal(e.event, line, e.message.slice(prefix.length));
}

/** the batch with `boundedBefore` set, its lazy `events` kept lazy */
function withBound(batch: IngestBatch, bound: bigint): IngestBatch {
  return Object.defineProperty(batch, "boundedBefore", { value: bound, enumerable: true });
}

/**
 * The request's batch parsed, checked and encoded on an ingest worker, when the backend encodes
 * ahead and the source's schema covers every event (then nothing widens, and the admission check
 * has nothing to refuse). Its events are made on the main thread only should the commit need
 * them (it met another schema). Undefined: the route parses the body itself.
 */
async function preparedBatch(
  deps: IngestLogsDeps,
  body: Buffer,
  format: BodyFormat,
  source: string,
  now: bigint,
): Promise<IngestBatch | undefined> {
  const schema = (await deps.schema()).sources[source];
  if (deps.workers === undefined || schema === undefined) return undefined;
  const maxEvents = deps.queue.capacity;
  const prepared = await deps.workers.prepare({
    body,
    format,
    source,
    nowMicros: now,
    maxEvents,
    schema,
  });
  if (prepared === undefined) return undefined;
  deps.onParsed?.("worker");
  let events: LogEvent[] | undefined;
  return {
    source,
    coveredBy: schema,
    prepared,
    get events() {
      if (events === undefined) {
        events = requestEvents(body, format, source, now, maxEvents).events;
        deps.onParsed?.("main");
      }
      return events;
    },
  };
}

/** The request's batch parsed and checked here, with the schema the admission check found to cover it. */
async function checkedBatch(
  deps: IngestLogsDeps,
  body: Buffer,
  format: BodyFormat,
  source: string,
  now: bigint,
): Promise<IngestBatch> {
  const { events, lines } = requestEvents(body, format, source, now, deps.queue.capacity);
  const batch: IngestBatch = { source, events };
  deps.onParsed?.("main");
  // what the check found: a store with these very fields need not walk the events again
  return { ...batch, coveredBy: deps.ingestAdmission.check(await deps.schema(), batch, lines) };
}

/**
 * `source_name`'s percent-encoding was not UTF-8: URLSearchParams made each bad byte U+FFFD, so
 * `%FF` and `%FE` (Latin-1 sent as is) both named the source "\uFFFD", created and written to
 * without a word. Told apart by counting the U+FFFD the raw value asks for.
 */
function lossyDecoding(query: string, decoded: string): boolean {
  if (!decoded.includes("\uFFFD")) return false;
  for (const pair of query.split("&")) {
    const [entry] = new URLSearchParams(pair);
    if (entry?.[0] !== "source_name") continue;
    const raw = pair.slice(pair.indexOf("=") + 1);
    const asked = raw.match(/%EF%BF%BD|\uFFFD/gi)?.length ?? 0;
    return (decoded.match(/\uFFFD/g)?.length ?? 0) > asked;
  }
  return false;
}

/** `source_name` exactly once (any other parameter is ignored; `api_key` is the token) */
function sourceQuery(originalUrl: string): { source: string; params: Record<string, string> } {
  const q = originalUrl.indexOf("?");
  const search = new URLSearchParams(q === -1 ? "" : originalUrl.slice(q + 1));
  const names = search.getAll("source_name");
  if (names.length === 0) {
    throw new QesError("missing_parameter", "source_name is required: POST /api/logs?source_name=<source>.", {
      param: "source_name",
    });
  }
  if (names.length > 1) {
    throw new QesError(
      "invalid_parameter",
      "source_name is given more than once; send one source per request.",
      {
        param: "source_name",
      },
    );
  }
  if (lossyDecoding(q === -1 ? "" : originalUrl.slice(q + 1), names[0] as string)) {
    throw new QesError(
      "invalid_parameter",
      "source_name is not UTF-8 once percent-decoded: encode the name's UTF-8 bytes (%C3%BC for ü).",
      { param: "source_name" },
    );
  }
  const params: Record<string, string> = Object.create(null);
  // as the query route reads it (http/request-params.ts): repeated with the same value it counts
  // once, with different values it is ambiguous; a repeat was answered 401 "a token is required"
  const tokens = new Set(search.getAll("api_key"));
  if (tokens.size > 1) {
    throw new QesError(
      "invalid_parameter",
      'Parameter "api_key" is given more than once with different values.',
      {
        param: "api_key",
      },
    );
  }
  const [token] = tokens;
  if (token !== undefined) params.api_key = token;
  return { source: names[0] as string, params };
}
