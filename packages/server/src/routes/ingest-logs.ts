import type { IngestBatch, LogEvent, LogSchema } from "@qes/core";
import { checkSourceName, QesError } from "@qes/core";
import type { Request, Response } from "express";
import type { ApiKeyVerifier } from "../auth/api-keys.ts";
import { authenticate, authorizeIngest } from "../auth/authenticate.ts";
import type { JwtVerifier } from "../auth/jwt.ts";
import { requestToken } from "../auth/request-token.ts";
import type { Clock } from "../clock.ts";
import type { BatchAdmission } from "../ingest/batch-admission.ts";
import { IngestBodyBudget } from "../ingest/body-budget.ts";
import { checkEventDays } from "../ingest/day-limit.ts";
import type { GroupCommitQueue } from "../ingest/group-commit-queue.ts";
import { toLogEvents } from "../ingest/log-events.ts";
import { bodyFormat, parseIngestEvents } from "../ingest/parse-ingest-body.ts";
import { readIngestBody } from "../ingest/read-ingest-body.ts";

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
  queue: GroupCommitQueue<LogEvent>;
  /** `QES_INGEST_MAX_BYTES` */
  ingestMaxBytes: number;
  /** sources, fields and served stored queries a batch may not break (checked again at commit) */
  ingestAdmission: BatchAdmission;
  /** the store's schema */
  schema: () => Promise<LogSchema>;
}

/**
 * `POST /api/logs?source_name=<source>` (DESIGN.md §10): authenticate (401) and authorise the
 * source (403) before reading the body; refuse at once when the queue is full (429); read the
 * body within the limit (413), parse and shape every event (400 `invalid_event` with its index,
 * nothing stored; the same for an event dated more than a day ahead, a request of too many days
 * or an event whose widening would break a served stored query), then wait for the group commit:
 * `200 {"accepted": N}` only once it is durable.
 */
export function ingestLogsRoute(deps: IngestLogsDeps) {
  const budget = new IngestBodyBudget(BODIES_IN_FLIGHT * deps.ingestMaxBytes);
  return async (req: Request, res: Response): Promise<void> => {
    const query = sourceQuery(req.originalUrl);
    const principal = authenticate(requestToken(req.headers, query.params), deps.verifier, deps.jwt);
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
    let events: LogEvent[];
    try {
      const body = await readIngestBody(req, deps.ingestMaxBytes, reservation);
      const parsed = parseIngestEvents(body, format, deps.queue.capacity);
      const now = deps.clock();
      events = toLogEvents(parsed.events, source, now, parsed.lines);
      checkEventDays(events, now, parsed.lines);
      const batch: IngestBatch = { source, events };
      const covered = deps.ingestAdmission.check(await deps.schema(), batch);
      if (events.length > 0) {
        // what the check found: a store with these very fields need not walk the events again
        const checked: IngestBatch = { ...batch, coveredBy: covered };
        committed = deps.queue.submit(checked);
      }
    } finally {
      reservation.release();
    }
    await committed;
    res.json({ accepted: events.length });
  };
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
  const params: Record<string, string> = Object.create(null);
  const token = search.getAll("api_key");
  if (token.length === 1) params.api_key = token[0] as string;
  return { source: names[0] as string, params };
}
