import type { Query, SetOp } from "./ir.ts";

/**
 * The operands of `A op B op C …`, in order. The analyser builds such a chain left-deep, one
 * level per operand: walking it recursively overflowed the stack at about 3,000 `UNION ALL`
 * branches (a 500 for a query well inside the length and token limits). This walks it in a loop.
 * A link with its own CTEs, ORDER BY, LIMIT or OFFSET, or another operator, stays one operand.
 */
export function setOpOperands(s: SetOp): Query[] {
  const reversed: Query[] = [];
  let link: SetOp = s;
  for (;;) {
    reversed.push(link.right);
    const left = link.left;
    const next = left.body;
    if (
      left.ctes.length === 0 &&
      next.k === "setop" &&
      next.op === s.op &&
      next.orderBy.length === 0 &&
      !next.limit &&
      !next.offset
    ) {
      link = next;
      continue;
    }
    reversed.push(left);
    return reversed.reverse();
  }
}
