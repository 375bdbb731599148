/**
 * A Bloom filter of event ids: `mightContain` is false only for ids never added. Ingest asks it
 * which ids of a batch may be stored already and asks DuckDB only about those, instead of a
 * semi-join that reads the source's whole `id` column for every batch (DuckDB keeps no index on
 * it, and an ART index would refuse the ALTERs of schema widening). About 1.2 MB per million ids
 * at a 1% false-positive rate; a false positive costs one lookup in DuckDB, never a lost event.
 */
export class IdFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;
  private count = 0;

  /** @param capacity ids it holds at about 1% false positives; `full` is true beyond it */
  constructor(readonly capacity: number) {
    // m = -n ln(0.01) / ln(2)^2 ≈ 9.6 bits per id; k = 7 probes
    this.size = Math.max(1024, Math.ceil(capacity * 9.6));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  get full(): boolean {
    return this.count > this.capacity;
  }

  add(id: string): void {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.size;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
    this.count++;
  }

  mightContain(id: string): boolean {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % this.size;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

const PROBES = 7;

/**
 * Two 32-bit hashes of the UTF-16 code units (FNV-1a with two offset bases, then a murmur3
 * finaliser each), for double hashing. `h2` is odd so that probes never collapse onto one bit.
 */
function hashes(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [fmix(a) >>> 0, (fmix(b) | 1) >>> 0];
}

function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
