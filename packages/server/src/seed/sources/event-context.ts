import type { Prng } from "../prng.ts";

/** What a source's event builder gets for one event. */
export interface EventContext {
  rng: Prng;
  project: string;
  /** the event's time, unix µs */
  micros: bigint;
  /** the event's time, ISO 8601 with µs */
  iso: string;
}

/** The fields of one event besides `id` and `timestamp`. */
export type EventBody = Record<string, unknown>;

export type EventBuilder = (ctx: EventContext) => EventBody;

/**
 * A JSON integer beyond ±2^53 (PostgreSQL query ids): written as digits by the generator, so the
 * loader must keep it exact.
 */
export function int64(value: bigint): string {
  return `${INT64_SENTINEL}${value}`;
}

export const INT64_SENTINEL = "\u0000int64:";

export const USER_AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
  "node",
  "Deno/2.1.4",
  "curl/8.5.0",
  "python-httpx/0.27.2",
  "Dart/3.5 (dart:io)",
  "okhttp/4.12.0",
  "PostgREST/12.2.3",
] as const;

export const CLIENT_INFO = [
  "supabase-js-web/2.47.10",
  "supabase-js-node/2.46.1",
  "supabase-flutter/2.8.1",
  "supabase-py/2.10.0",
  "supabase-swift/2.20.0",
] as const;

export const COUNTRIES = [
  ["US", "San Francisco", "SJC", "NA", "37.7749", "-122.4194"],
  ["DE", "Frankfurt am Main", "FRA", "EU", "50.1109", "8.6821"],
  ["GB", "London", "LHR", "EU", "51.5074", "-0.1278"],
  ["SG", "Singapore", "SIN", "AS", "1.3521", "103.8198"],
  ["BR", "São Paulo", "GRU", "SA", "-23.5505", "-46.6333"],
  ["IN", "Mumbai", "BOM", "AS", "19.0760", "72.8777"],
  ["AU", "Sydney", "SYD", "OC", "-33.8688", "151.2093"],
] as const;

export const EDGE_REGIONS = [
  "us-east-1",
  "eu-central-1",
  "ap-southeast-1",
  "eu-west-2",
  "sa-east-1",
] as const;
