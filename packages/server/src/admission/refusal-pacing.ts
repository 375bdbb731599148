import ipaddr from "ipaddr.js";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** the longest a refusal is held: the limiter's window */
const WINDOW_SECONDS = 1;

/**
 * Refusals (4xx) sent at a bounded pace per caller (`QES_REFUSALS_PER_SECOND`). A client that
 * loops on refused requests — hostile SQL, queries past its slots or rate, bad tokens — gets each
 * answer as fast as the server can refuse, so the cheaper the refusal, the more of them it sends:
 * in the soak (bench/soak.ts) 40 such loops on one token sent ~970 requests a second, and the
 * event loop busy refusing them held every other caller's answers, cache hits included. Beyond
 * its budget in a second, a caller's next refusal is sent when that second ends: a loop then
 * sends about one request per connection per second. Answers that are not refusals, and callers
 * within their budget, never wait. Counted in process (rate-limiter-flexible's memory store, whose
 * keys expire with their window): the pace is per instance.
 */
export class RefusalPacing {
  readonly #limiter: RateLimiterMemory;

  constructor(perSecond: number) {
    this.#limiter = new RateLimiterMemory({
      points: perSecond,
      duration: WINDOW_SECONDS,
      keyPrefix: "qes-refusals",
    });
  }

  /** counts one refusal of `key`; resolves to how long to hold it (0 within the budget) */
  async holdMs(key: string): Promise<number> {
    try {
      await this.#limiter.consume(key);
      return 0;
    } catch (e) {
      if (e instanceof RateLimiterRes) return Math.min(e.msBeforeNext, WINDOW_SECONDS * 1000);
      return 0;
    }
  }
}

/**
 * Whom a refusal is counted against: the authenticated caller (`Principal.caller`, which a route
 * leaves in `res.locals.caller`), else the client's network — a request refused before it was
 * authenticated (a bad token, a NUL byte) has no other name.
 */
export function refusalKey(caller: unknown, remoteAddress: string | undefined): string {
  return typeof caller === "string" ? `caller:${caller}` : `address:${clientNetwork(remoteAddress)}`;
}

/** bits of an IPv6 address that name one client: a site gets at least a /64 (RFC 6177) */
const IPV6_CLIENT_PREFIX = 64;

/**
 * The network an address belongs to, as one client: an IPv4 address itself (an IPv4-mapped IPv6
 * address too), an IPv6 address's /64. One IPv6 host holds a whole /64 and can send each request
 * from a new address in it, so counting per address would give it 2^64 budgets.
 */
export function clientNetwork(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return remoteAddress ?? "unknown";
  const addr = ipaddr.process(remoteAddress);
  if (addr.kind() === "ipv4") return addr.toString();
  const parts = (addr as ipaddr.IPv6).toByteArray();
  const masked = parts.map((b, i) => (i * 8 < IPV6_CLIENT_PREFIX ? b : 0));
  return `${ipaddr.fromByteArray(masked).toString()}/${IPV6_CLIENT_PREFIX}`;
}
