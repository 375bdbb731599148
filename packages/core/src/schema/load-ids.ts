import { IdFilter } from "./id-filter.ts";

/** What a backend's load tells `LoadIds` about its source. */
export interface LoadIdsStore {
  /**
   * Events the source held when the load began (an estimate will do: it sizes a filter); 0 for a
   * new or empty source, whose ids need no look-up.
   */
  storedBefore: number;
  /**
   * The ids the load may ask `stored` about one by one before it reads every id of the source
   * into a filter instead (`readIds`): 0 reads them at once (an engine without an index on `id`,
   * where every look-up reads the whole column); Infinity never (no `readIds`).
   */
  probesBeforeRead: number;
  /** Calls `add` with every id the source stores (the load's own rows may be among them). */
  readIds?(add: (id: string) => void): Promise<void>;
  /** Makes every event the load kept so far visible to `stored` (writes the rows that wait). */
  flush(): Promise<void>;
  /** The ids among `ids` that the source stores, the load's own rows included. */
  stored(ids: string[]): Promise<Set<string>>;
}

/** ids the first filter of a load's own holds before the next one, twice as large, is started */
const FIRST_OWN = 65_536;
/**
 * Bits per id four times what IdFilter takes for 1% false positives: ~4·10⁻⁶ each when full, so a
 * load of unique ids into a new source looks an id up about once per 250,000 events.
 */
const OVERSIZE = 4;

/**
 * Which events of a `qes load` to store (DESIGN.md §10: a retry never duplicates; a load re-run
 * after it failed half-way neither): an event whose id the source stores already, or that came
 * earlier in the load, is left out, as ingest leaves it out. Bloom filters of the load's own ids
 * and of the source's stored ids (IdFilter) pass most events without a look-up; the few they may
 * have seen are looked up in the engine (`LoadIdsStore.stored`), which is the truth. Memory stays
 * ~5 bytes per id, however long the load, where a Set of its ids took ~100.
 */
export class LoadIds {
  /** filters of the ids this load kept or passed over, each twice as large as the one before */
  private readonly own: { filter: IdFilter; holds: number; limit: number }[] = [];
  /** the source's ids before the load: undefined while they are looked up one by one */
  private prior: IdFilter | undefined;
  private probed = 0;
  /** events left out so far */
  duplicates = 0;

  constructor(private readonly store: LoadIdsStore) {
    this.startOwn(FIRST_OWN);
  }

  /**
   * Which of a batch's ids (in input order) to store: undefined when all of them, else one flag
   * per id. The first of ids repeated in the batch is kept.
   */
  async keep(ids: readonly string[]): Promise<boolean[] | undefined> {
    if (this.store.storedBefore > 0 && this.prior === undefined && this.probed >= this.store.probesBeforeRead)
      await this.readPrior();
    const asked = new Set<string>();
    for (const id of ids) {
      if (this.maybeSeen(id)) asked.add(id);
      this.addOwn(id);
    }
    if (asked.size === 0) return undefined;
    await this.store.flush();
    const stored = await this.store.stored([...asked]);
    if (this.prior === undefined) this.probed += asked.size;
    const kept = new Set<string>();
    const keep = ids.map((id) => {
      if (!asked.has(id)) return true;
      if (stored.has(id) || kept.has(id)) return false;
      kept.add(id);
      return true;
    });
    for (const k of keep) if (!k) this.duplicates++;
    return keep;
  }

  private maybeSeen(id: string): boolean {
    if (this.store.storedBefore > 0 && (this.prior === undefined || this.prior.mightContain(id))) return true;
    for (const own of this.own) if (own.filter.mightContain(id)) return true;
    return false;
  }

  private addOwn(id: string): void {
    let last = this.own[this.own.length - 1]!;
    if (last.holds >= last.limit) last = this.startOwn(2 * last.limit);
    last.filter.add(id);
    last.holds++;
  }

  private startOwn(limit: number): { filter: IdFilter; holds: number; limit: number } {
    const own = { filter: new IdFilter(OVERSIZE * limit), holds: 0, limit };
    this.own.push(own);
    return own;
  }

  private async readPrior(): Promise<void> {
    if (this.store.readIds === undefined) return;
    const prior = new IdFilter(OVERSIZE * Math.max(FIRST_OWN, this.store.storedBefore));
    await this.store.readIds((id) => prior.add(id));
    this.prior = prior;
  }
}
