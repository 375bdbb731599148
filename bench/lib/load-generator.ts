import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, request } from "node:http";
import { percentile } from "./stats.ts";

/**
 * Load against a loopback HTTP server: `wrk` when installed (apt `wrk`; it costs the machine least),
 * else a bounded Node generator (N requests over C keep-alive connections, then it stops).
 */
export interface LoadResult {
  tool: string;
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** wrk: duration; Node: the request budget is seconds × an estimate, capped by `maxRequests` */
  seconds: number;
  maxRequests: number;
}

export function loadTool(): "wrk" | "node" {
  if (process.env.QES_BENCH_LOADGEN === "node") return "node";
  return ["/usr/bin/wrk", "/usr/local/bin/wrk"].some((p) => existsSync(p)) ? "wrk" : "node";
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return loadTool() === "wrk" ? runWrk(spec) : runNode(spec);
}

function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const args = ["-t1", `-c${spec.connections}`, `-d${spec.seconds}s`, "--latency", "--timeout", "10s"];
  for (const [k, v] of Object.entries(spec.headers)) args.push("-H", `${k}: ${v}`);
  args.push(spec.url);
  return new Promise((resolve, reject) => {
    execFile("wrk", args, { timeout: (spec.seconds + 30) * 1000 }, (err, stdout) => {
      if (err) return reject(err);
      const total = /(\d+) requests in ([\d.]+)(m?s)/.exec(stdout);
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
      const lat = (p: string) => {
        const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(stdout);
        if (!m) return Number.NaN;
        const v = Number(m[1]);
        return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
      };
      const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
      const sockErr = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
      resolve({
        tool: "wrk 1 thread",
        requests: Number(total?.[1] ?? 0),
        seconds: total ? Number(total[2]) / (total[3] === "ms" ? 1000 : 1) : spec.seconds,
        requestsPerSecond: Number(rps?.[1] ?? 0),
        p50Ms: lat("50"),
        p99Ms: lat("99"),
        errors:
          Number(non2xx?.[1] ?? 0) + (sockErr ? sockErr.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
      });
    });
  });
}

async function runNode(spec: LoadSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const deadline = performance.now() + spec.seconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = request(spec.url, { agent, headers: spec.headers }, (res) => {
        if (res.statusCode !== 200) errors++;
        res.on("data", () => undefined);
        res.on("end", () => {
          latencies.push(performance.now() - t);
          resolve();
        });
      });
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (issued < spec.maxRequests && performance.now() < deadline) {
        issued++;
        await one();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    tool: "node generator",
    requests: latencies.length,
    seconds,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors,
  };
}
