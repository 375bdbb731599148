import type { Backend, CompiledQuery } from "@qes/core";
import { call, HASHED_TOKEN, type HttpServer, TOKEN } from "./in-process.ts";

/**
 * What the tests of the planner's estimate at admission (issue 12) share: a backend that records
 * what it was asked to run, another caller's dashboard keeping the engine in use, and /metrics.
 */

/** the tests' three-way cross join, in the SQL the backend was asked to run */
export const isCrossJoin = (sql: string) => /length\(.*length\(.*length\(/s.test(sql);

/** the backend, with the SQL of every query it was asked to run */
export function recordingBackend(backend: Backend): { backend: Backend; ran: string[] } {
  const ran: string[] = [];
  const proxy = new Proxy(backend, {
    get(target, prop) {
      if (prop === "execute")
        return (q: CompiledQuery, ...rest: [never, never]) => {
          ran.push(q.sql);
          return target.execute(q, ...rest);
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { backend: proxy, ran };
}

/** GET `path` as the caller holding `token` */
export const getAs = (server: HttpServer, path: string, token: string, signal?: AbortSignal) =>
  call(`${server.url}${path}`, { headers: { "X-API-KEY": token }, ...(signal ? { signal } : {}) });

/** another caller's dashboard: one cheap `logs.all` after another until `stop()`, its statuses */
export function dashboard(server: HttpServer, path: string): { stop: () => Promise<number[]> } {
  let stopped = false;
  const statuses: number[] = [];
  const loop = (async () => {
    for (let i = 0; !stopped; i++)
      statuses.push(
        (await getAs(server, `${path}&iso_timestamp_start=2025-01-15T0${i % 10}:00:00Z`, HASHED_TOKEN))
          .status,
      );
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return statuses;
    },
  };
}

export async function metricsOf(server: HttpServer): Promise<string> {
  return (await call(`${server.url}/metrics`, { headers: { "X-API-KEY": TOKEN } })).text;
}
