/**
 * Deepest nesting of objects and arrays an event may have (BigQuery itself allows 15 levels), for
 * every way in: the ingest route and `qes load` alike. The schema code recurses per level (an
 * event of 3,000 levels overflowed the stack of `qes load`'s widening), and a load and an ingest
 * request must take and refuse the same events.
 */
export const MAX_EVENT_DEPTH = 64;

/**
 * Does an object or array at `levels` or more below `node` (itself one level) hold objects or
 * arrays? Recursive, but never deeper than `levels`: whatever the value's depth (JSON.parse is not
 * recursive and takes any), the stack stays short. No allocation per node, unlike a walk with its
 * own stack (this check was 6 % of an HTTP ingest's server CPU).
 */
export function nestsAtLeast(node: object, levels: number): boolean {
  if (levels <= 0) return true;
  if (Array.isArray(node)) {
    for (const child of node) {
      if (child !== null && typeof child === "object" && nestsAtLeast(child, levels - 1)) return true;
    }
    return false;
  }
  const obj = node as Record<string, unknown>;
  for (const key in obj) {
    const child = obj[key];
    if (child !== null && typeof child === "object" && nestsAtLeast(child, levels - 1)) return true;
  }
  return false;
}

/** the reason given when an event nests deeper than MAX_EVENT_DEPTH */
export const TOO_DEEP = `objects and arrays nested deeper than ${MAX_EVENT_DEPTH} levels`;
