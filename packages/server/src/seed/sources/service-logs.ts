import type { EventBody, EventContext } from "./event-context.ts";

/** `postgREST.logs.prod`: PostgREST's own lines */
export function postgrestLogEvent({ rng, project }: EventContext): EventBody {
  const message = rng.weighted([
    [`${rng.ipv4()} - authenticator "GET /todos?select=* HTTP/1.1" 200 - "" "node"`, 40],
    ["Attempting to connect to the database...", 8],
    ["Connection successful", 8],
    ["Listening on port 3000", 5],
    ["Schema cache loaded", 12],
    ["Listening for notifications on the pgrst channel", 5],
    ["Failed listening for notifications on the pgrst channel. connection refused", 2],
  ] as const);
  return { project, event_message: message, metadata: { host: `db-${project}` } };
}

/** `pgbouncer.logs.prod`: the connection pooler's lines */
export function pgbouncerLogEvent({ rng, project }: EventContext): EventBody {
  const ip = rng.ip(0.3);
  const client = `C-0x${rng.hex(12)}: postgres/authenticator@${ip.includes(":") ? `[${ip}]` : ip}:${rng.int(30_000, 65_000)}`;
  const message = rng.weighted([
    [`LOG ${client} login attempt: db=postgres user=authenticator tls=TLSv1.3/TLS_AES_256_GCM_SHA384`, 50],
    [`LOG ${client} closing because: client close request (age=${rng.int(1, 900)}s)`, 40],
    [`WARNING ${client} pooler error: no more connections allowed (max_client_conn)`, 5],
    ["LOG stats: 12 xacts/s, 40 queries/s, in 5120 B/s, out 30412 B/s, xact 830 us, query 402 us", 10],
  ] as const);
  return { project, event_message: message, metadata: { host: `pgbouncer-${project}` } };
}
