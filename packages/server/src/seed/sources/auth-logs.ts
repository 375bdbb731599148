import { type EventBody, type EventContext, USER_AGENTS } from "./event-context.ts";

const REQUESTS = [
  ["POST", "/token", 200, "password"],
  ["POST", "/token", 200, "refresh_token"],
  ["GET", "/user", 200, ""],
  ["POST", "/logout", 204, ""],
  ["POST", "/signup", 200, ""],
  ["POST", "/otp", 200, ""],
  ["GET", "/health", 200, ""],
  ["POST", "/token", 400, "password"],
  ["GET", "/user", 401, ""],
  ["POST", "/signup", 422, ""],
  ["POST", "/otp", 429, ""],
  ["POST", "/token", 500, "refresh_token"],
] as const;

const ERRORS: Record<number, string> = {
  400: "400: Invalid login credentials",
  401: "401: invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired",
  422: "422: User already registered",
  429: "429: Email rate limit exceeded",
  500: "500: Database error granting user",
};

/** `gotrue.logs.prod`: GoTrue's JSON lines, parsed into metadata; `event_message` is the line */
export function authLogEvent({ rng, project, iso }: EventContext): EventBody {
  const requestId = rng.uuid();
  const ip = rng.ip(0.3);
  let line: Record<string, unknown>;
  if (rng.chance(0.15)) {
    // background lines carry no HTTP status
    line = {
      component: rng.pick(["api", "mailer", "cleanup"]),
      level: "info",
      msg: rng.pick([
        "Login",
        "Token refreshed",
        "cleanup: removed 3 expired sessions",
        "Sending confirmation email",
      ]),
      time: iso,
    };
  } else {
    const [method, path, status, grant] = rng.weighted(REQUESTS.map((r, i) => [r, i < 7 ? 12 : 2] as const));
    line = {
      component: "api",
      duration: rng.int(200_000, 400_000_000),
      level: status >= 500 ? "error" : status >= 400 ? "warning" : "info",
      method,
      msg: status >= 400 ? ERRORS[status] : "request completed",
      path,
      referer: rng.pick(["https://app.example.com", "http://localhost:3000", ""]),
      remote_addr: ip,
      request_id: requestId,
      status,
      time: iso,
    };
    if (status >= 400) line.error = ERRORS[status];
    if (grant !== "") line.grant_type = grant;
    if (status === 200 && path === "/token") {
      line.auth_event = {
        action: grant === "password" ? "login" : "token_refreshed",
        actor_id: rng.uuid(),
        actor_username: `user${rng.int(1, 5000)}@example.com`,
        actor_via_sso: false,
        log_type: "account",
        traits: { provider: rng.pick(["email", "google", "github"]) },
      };
      line.login_method = grant;
    }
    line.user_agent = rng.pick(USER_AGENTS);
  }
  return {
    project,
    event_message: JSON.stringify(line),
    metadata: { ...line, timestamp: iso, host: `auth-${project}`, project },
  };
}
