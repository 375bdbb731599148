const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * A small seeded pseudo-random generator (sfc32 seeded through splitmix32): the same seed gives
 * the same events on every machine, at any size, without storing anything.
 */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number | string) {
    let s = typeof seed === "number" ? seed >>> 0 : hashString(seed);
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** picks by weight: `[[value, weight], …]` */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [v, w] of items) {
      r -= w;
      if (r < 0) return v;
    }
    return (items.at(-1) as readonly [T, number])[0];
  }

  hex(length: number): string {
    let s = "";
    while (s.length < length) {
      const v = this.uint32();
      s +=
        (HEX_BYTE[v & 255] as string) +
        HEX_BYTE[(v >>> 8) & 255] +
        HEX_BYTE[(v >>> 16) & 255] +
        HEX_BYTE[v >>> 24];
    }
    return s.length === length ? s : s.slice(0, length);
  }

  /** a version-4 UUID */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((Number.parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** a public-looking IPv4 address */
  ipv4(): string {
    const first = this.pick([31, 37, 45, 62, 78, 84, 91, 102, 138, 145, 176, 185, 193, 203, 212]);
    return `${first}.${this.int(0, 255)}.${this.int(0, 255)}.${this.int(1, 254)}`;
  }

  /** a public-looking IPv6 address, in compressed or full textual form */
  ipv6(): string {
    const prefix = this.pick(["2a02:c7c", "2001:4860", "2600:1700", "2a01:4f8", "2c0f:f248", "2406:da18"]);
    const groups = [this.int(0, 0xffff), this.int(0, 0xffff)].map((g) => g.toString(16));
    if (this.chance(0.5)) return `${prefix}:${groups.join(":")}::${this.int(1, 0xffff).toString(16)}`;
    const rest = Array.from({ length: 4 }, () => this.int(0, 0xffff).toString(16));
    return `${prefix}:${groups.join(":")}:${rest.join(":")}`;
  }

  ip(v6Share = 0.3): string {
    return this.chance(v6Share) ? this.ipv6() : this.ipv4();
  }
}

/** FNV-1a, to turn a text seed into a number */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
