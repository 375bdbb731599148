import { postgresTime } from "../event-time.ts";
import { type EventBody, type EventContext, int64 } from "./event-context.ts";

const MESSAGES = [
  ["LOG", "connection received: host=%ip port=%port", "client backend", "", "00000"],
  [
    "LOG",
    "connection authorized: user=authenticator database=postgres application_name=PostgREST 12.2.3",
    "client backend",
    "authentication",
    "00000",
  ],
  [
    "LOG",
    "disconnection: session time: 0:00:%s.%ms user=authenticator database=postgres host=%ip port=%port",
    "client backend",
    "idle",
    "00000",
  ],
  [
    "LOG",
    "checkpoint complete: wrote %n buffers (0.%n%); 0 WAL file(s) added, 0 removed, 1 recycled",
    "checkpointer",
    "",
    "00000",
  ],
  ["LOG", "cron job 1 starting: SELECT net.http_post('https://example.com/hook')", "pg_cron", "", "00000"],
  [
    "ERROR",
    'duplicate key value violates unique constraint "profiles_pkey"',
    "client backend",
    "INSERT",
    "23505",
  ],
  ["ERROR", 'relation "public.todo" does not exist', "client backend", "SELECT", "42P01"],
  ["ERROR", "canceling statement due to statement timeout", "client backend", "SELECT", "57014"],
  ["WARNING", "there is no transaction in progress", "client backend", "COMMIT", "25P01"],
  [
    "FATAL",
    'password authentication failed for user "postgres"',
    "client backend",
    "authentication",
    "28P01",
  ],
] as const;

/** `postgres.logs`: PostgreSQL's csvlog fields parsed into `metadata.parsed` */
export function postgresLogEvent({ rng, project, micros }: EventContext): EventBody {
  const [severity, template, backendType, commandTag, sqlState] = rng.weighted(
    MESSAGES.map((m, i) => [m, i < 3 ? 20 : i < 5 ? 6 : 3] as const),
  );
  const ip = rng.ip(0.25);
  const port = rng.int(30_000, 65_000);
  const message = template
    .replace("%ip", ip)
    .replace("%port", String(port))
    .replace("%s", String(rng.int(0, 59)).padStart(2, "0"))
    .replace("%ms", String(rng.int(0, 999)).padStart(3, "0"))
    .replaceAll("%n", String(rng.int(1, 90)));
  const pid = rng.int(100, 99_999);
  const user = rng.pick([
    "authenticator",
    "postgres",
    "supabase_admin",
    "supabase_auth_admin",
    "supabase_storage_admin",
  ]);
  // query ids are 64-bit hashes: most do not fit a double
  const queryId = (BigInt(rng.uint32()) << 31n) ^ BigInt(rng.uint32()) ^ (BigInt(rng.int(0, 1 << 30)) << 32n);
  return {
    project,
    event_message: message,
    metadata: {
      host: `db-${project}`,
      parsed: {
        backend_type: backendType,
        command_tag: commandTag,
        connection_from: ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`,
        database_name: "postgres",
        error_severity: severity,
        process_id: pid,
        query_id: int64(rng.chance(0.5) ? -queryId : queryId),
        session_id: `${rng.hex(8)}.${pid.toString(16)}`,
        session_line_num: rng.int(1, 40),
        session_start_time: postgresTime(micros - BigInt(rng.int(0, 3_600)) * 1_000_000n),
        sql_state_code: sqlState,
        timestamp: postgresTime(micros),
        transaction_id: rng.int(0, 2_000_000),
        user_name: user,
        virtual_transaction_id: `${rng.int(1, 20)}/${rng.int(1, 90_000)}`,
      },
    },
  };
}
