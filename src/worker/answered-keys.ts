/** A table slot's words: the fingerprint's high half at 0, then: */
const LO = 1;
const AT = 2;
const SLOT = 4;
/** Keys the ring holds before it first grows. */
const RING_START = 32;

/**
 * The 64-bit fingerprints of the last `capacity` deliveries answered (delivery-ledger.ts takes
 * them), oldest forgotten first, in typed arrays. A remembered key costs the heap nothing: as
 * strings in a Set, 10,000 keys churning at the worker's rate were promoted and swept again,
 * and the persistent hot path cost nearly twice as much (docs/benchmarks-rationale.md).
 * Both arrays grow as keys come: a service that is idle, or answers a few, holds little.
 */
export class AnsweredKeys {
  // Open addressing, linear probing. A slot is four words, so that a probe reads one cache
  // line: the fingerprint's two halves, then `at` (0 when empty, else its ring index + 1).
  // The table grows as keys come, to at least twice the capacity: an idle service holds a small one.
  private table: Uint32Array;
  private mask: number;
  private readonly maxSlots: number;
  // Fingerprints in the order answered (two words each), for forgetting the oldest; it grows
  // until it holds `capacity`, then wraps.
  private ring: Uint32Array;
  private next = 0;
  private wrapped = false;
  private count = 0;

  constructor(readonly capacity: number) {
    // At most half full, so a probe ends after a slot or two.
    let slots = 2;
    while (slots < capacity * 2) slots *= 2;
    this.maxSlots = slots;
    slots = Math.min(slots, 64);
    this.table = new Uint32Array(slots * SLOT);
    this.mask = slots - 1;
    this.ring = new Uint32Array(Math.min(capacity, RING_START) * 2);
  }

  get size(): number {
    return this.count;
  }

  /** What the two arrays take now: little until keys come, whatever the capacity. */
  get bytes(): number {
    return this.table.byteLength + this.ring.byteLength;
  }

  has(hi: number, lo: number): boolean {
    return this.capacity !== 0 && this.find(hi, lo) >= 0;
  }

  /** Remembers a key by its fingerprint, forgetting the oldest once `capacity` are held. */
  add(hi: number, lo: number): void {
    if (this.capacity === 0) return;
    const r = this.next;
    const t = this.table;
    if (this.wrapped) {
      // The ring slot about to be reused holds the oldest key. A key answered again since
      // then points at its newer ring slot and stays.
      const old = this.find(this.ring[r * 2]!, this.ring[r * 2 + 1]!);
      if (old >= 0 && t[old * SLOT + AT] === r + 1) this.remove(old);
    }
    if (r * 2 === this.ring.length) this.growRing();
    this.ring[r * 2] = hi;
    this.ring[r * 2 + 1] = lo;
    if (r + 1 === this.capacity) {
      this.next = 0;
      this.wrapped = true;
    } else {
      this.next = r + 1;
    }
    const found = this.find(hi, lo);
    if (found >= 0) {
      t[found * SLOT + AT] = r + 1;
      return;
    }
    if ((this.count + 1) * 2 > this.mask + 1 && this.mask + 1 < this.maxSlots) this.grow();
    this.put(hi, lo, r + 1);
    this.count++;
  }

  private put(hi: number, lo: number, at: number): void {
    const t = this.table;
    let i = hi & this.mask;
    for (let probes = 0; t[i * SLOT + AT] !== 0; probes++) {
      // Never so while count <= capacity <= half the slots; a bug must not hang the worker.
      if (probes > this.mask) throw new Error('answered keys: no free slot');
      i = (i + 1) & this.mask;
    }
    t[i * SLOT] = hi;
    t[i * SLOT + LO] = lo;
    t[i * SLOT + AT] = at;
  }

  /** Filled in order up to its end, not yet wrapped: copied into one twice as long, at most `capacity`. */
  private growRing(): void {
    const ring = new Uint32Array(Math.min(this.capacity, this.ring.length) * 4);
    ring.set(this.ring);
    this.ring = ring;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    this.mask = this.table.length / SLOT - 1;
    for (let b = 0; b < old.length; b += SLOT) if (old[b + AT] !== 0) this.put(old[b]!, old[b + LO]!, old[b + AT]!);
  }

  private find(hi: number, lo: number): number {
    const t = this.table;
    let i = hi & this.mask;
    for (let probes = 0; t[i * SLOT + AT] !== 0 && probes <= this.mask; probes++) {
      if (t[i * SLOT] === hi && t[i * SLOT + LO] === lo) return i;
      i = (i + 1) & this.mask;
    }
    return -1;
  }

  /** Empties slot `i` and moves back the entries after it that probed past it, so no probe stops short. */
  private remove(i: number): void {
    const t = this.table;
    const mask = this.mask;
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (t[j * SLOT + AT] === 0) break;
      const home = t[j * SLOT]! & mask;
      // Stays if its home lies cyclically in (hole, j]: its probe never crossed the hole.
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      const to = hole * SLOT;
      const from = j * SLOT;
      t[to] = t[from]!;
      t[to + LO] = t[from + LO]!;
      t[to + AT] = t[from + AT]!;
      hole = j;
    }
    t[hole * SLOT + AT] = 0;
    this.count--;
  }
}
