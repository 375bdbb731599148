import type { EventBody, EventContext } from "./event-context.ts";

/** `realtime.logs.prod`: Elixir logger lines of the Realtime server; the project is in metadata */
export function realtimeLogEvent({ rng, project, micros }: EventContext): EventBody {
  const billing = rng.chance(0.25);
  const [module, fn, message, level] = billing
    ? ([
        "Realtime.Telemetry.Logger",
        "handle_event/4",
        "Billing metrics: [:realtime, :connections]",
        "info",
      ] as const)
    : rng.weighted([
        [["Realtime.Tenants.Connect", "connect/3", "Connected to database", "info"], 10],
        [
          [
            "RealtimeWeb.RealtimeChannel",
            "join/3",
            `Client ${rng.ip(0.35)} joined channel realtime:public:messages`,
            "info",
          ],
          30,
        ],
        [["RealtimeWeb.RealtimeChannel", "terminate/2", "Channel closed: client disconnected", "info"], 20],
        [["Realtime.Tenants", "handle_info/2", "Postgres changes subscription error: timeout", "error"], 4],
        [["RealtimeWeb.UserSocket", "connect/3", "Token has expired 1024 seconds ago", "warning"], 6],
      ] as const);
  const metadata: Record<string, unknown> = {
    context: {
      application: "realtime",
      domain: ["elixir"],
      file: `lib/${module.toLowerCase().replaceAll(".", "/")}.ex`,
      function: fn,
      gl: `<0.${rng.int(1000, 9999)}.0>`,
      line: rng.int(20, 700),
      mfa: [module, fn.split("/")[0], fn.split("/")[1]],
      module,
      pid: `<0.${rng.int(1000, 99999)}.0>`,
      time: Number(micros),
      vm: { node: `realtime@${rng.ipv4()}` },
    },
    external_id: project,
    level,
    project,
  };
  if (billing) {
    const connected = rng.int(0, 400);
    metadata.measurements = {
      connected,
      connected_cluster: connected + rng.int(0, 50),
      limit: 500,
      sum: connected,
    };
  }
  return { event_message: message, metadata };
}
