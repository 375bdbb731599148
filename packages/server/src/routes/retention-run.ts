import { timingSafeEqual } from "node:crypto";
import { QesError, type RetentionReport } from "@qes/core";
import type { Request, Response } from "express";
import { hashToken } from "../auth/api-keys.ts";
import { requestToken } from "../auth/request-token.ts";
import { queryStringParams } from "../http/request-params.ts";

export interface RetentionRunDeps {
  /** SHA-256 of the one token that may ask: the local credential of `<store>.serve.json` */
  token: Buffer;
  /** one retention run with this server's QES_RETENTION_DAYS (a run under way is joined) */
  run(): Promise<RetentionReport[]>;
}

/**
 * `POST /api/retention`: one retention run now, answered with what each source lost. It exists
 * for `qes retention` on an embedded store (DuckDB, chDB) that a running `qes serve` holds: the
 * serving process is the only one that can write the file, so a cron line would otherwise do
 * nothing while the server runs. Only the token `qes serve` wrote beside the store (mode 0600,
 * made for this run) may ask: whoever can read it could already change the store itself. Query
 * and ingest tokens get 403; no token 401. The token is compared by hash in constant time.
 */
export function retentionRunRoute(deps: RetentionRunDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const presented = requestToken(req.headers, queryStringParams(req.originalUrl));
    if (presented === undefined)
      throw new QesError(
        "unauthorized",
        "POST /api/retention needs the token qes serve wrote beside its store.",
      );
    if (!timingSafeEqual(hashToken(presented), deps.token))
      throw new QesError(
        "forbidden",
        "POST /api/retention is for `qes retention` on this server's machine: only the token in <store>.serve.json may ask.",
      );
    const reports = await deps.run();
    res.json({
      sources: reports.map((r) => ({
        source: r.source,
        removed: r.deletedEvents,
        ...(r.droppedPartitions !== undefined ? { dropped_partitions: r.droppedPartitions } : {}),
      })),
    });
  };
}
