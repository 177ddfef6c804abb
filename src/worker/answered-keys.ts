import { randomBytes } from 'node:crypto';

/** A table slot's words: the fingerprint's high half at 0, then: */
const LO = 1;
const AT = 2;
const SLOT = 4;

/**
 * The last `capacity` keys answered, oldest forgotten first, held as 64-bit fingerprints in
 * typed arrays. A remembered key costs the heap nothing: as strings in a Map, 10,000 keys
 * churning at the worker's rate were promoted and swept again, and that cost the persistent
 * path about 3 µs a request (docs/benchmarks-rationale.md).
 *
 * A fingerprint can collide: then a first delivery reads as answered, is acked, and runs
 * nothing. With n keys remembered and a hash that spreads keys evenly, that chance is
 * n / 2^64 a delivery (5e-16 at 10,000). The hash is seeded per process, so a publisher
 * cannot compute in advance which ids collide with another agent's request (docs/security.md).
 */
export class AnsweredKeys {
  // Open addressing, linear probing. A slot is four words, so that a probe reads one cache
  // line: the fingerprint's two halves, then `at` (0 when empty, else its ring index + 1).
  // The table grows as keys come, to at least twice the capacity: an idle service holds a small one.
  private table: Uint32Array;
  private mask: number;
  private readonly maxSlots: number;
  // Fingerprints in the order answered (two words each), for forgetting the oldest.
  private readonly ring: Uint32Array;
  private next = 0;
  private wrapped = false;
  private count = 0;
  private readonly seedHi: number;
  private readonly seedLo: number;
  /** The last fingerprint hash() took, in two halves: returning a pair would allocate. */
  hi = 0;
  lo = 0;

  /** `seed`: 8 bytes, for tests that must find two keys alike; a worker's is random. */
  constructor(
    readonly capacity: number,
    seed: Buffer = randomBytes(8),
  ) {
    // At most half full, so a probe ends after a slot or two.
    let slots = 2;
    while (slots < capacity * 2) slots *= 2;
    this.maxSlots = slots;
    slots = Math.min(slots, 64);
    this.table = new Uint32Array(slots * SLOT);
    this.mask = slots - 1;
    this.ring = new Uint32Array(capacity * 2);
    this.seedHi = seed.readUInt32LE(0);
    this.seedLo = seed.readUInt32LE(4);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Takes the fingerprint of a request id and a delivery key, as if of the one string they
   * make with a separator, without making it: read it from `hi` and `lo`, to ask has() and
   * add() with. A key that is a number (the native client's publish time) is taken as its two
   * 32-bit words, not as its digits.
   */
  hash(id: string, deliveryKey: string | number): void {
    this.hi = this.seedHi;
    this.lo = this.seedLo;
    this.absorb(id);
    if (typeof deliveryKey === 'number') this.absorbNumber(deliveryKey);
    else this.absorb(deliveryKey);
    let a = this.hi;
    let b = this.lo;
    // Each lane mixed into the other, so that every bit of the input reaches both halves.
    a = Math.imul(a ^ (a >>> 16), 0x7feb352d);
    b = Math.imul(b ^ (b >>> 16), 0x7feb352d);
    a ^= Math.imul(b ^ (b >>> 15), 0x846ca68b);
    b ^= Math.imul(a ^ (a >>> 15), 0x846ca68b);
    this.hi = a >>> 0;
    this.lo = b >>> 0;
  }

  /** Two UTF-16 units a step; each lane multiplies, then rotates so that high bits reach low ones. */
  private absorb(s: string): void {
    let a = this.hi;
    let b = this.lo;
    const n = s.length;
    let k = 0;
    for (; k + 1 < n; k += 2) {
      const c = s.charCodeAt(k) | (s.charCodeAt(k + 1) << 16);
      a = Math.imul(a ^ c, 0x9e3779b1);
      a = (a << 15) | (a >>> 17);
      b = Math.imul(b ^ c, 0x85ebca77);
      b = (b << 13) | (b >>> 19);
    }
    if (k < n) {
      const c = s.charCodeAt(k);
      a = Math.imul(a ^ c, 0x9e3779b1);
      b = Math.imul(b ^ c, 0x85ebca77);
    }
    // The length, as a step of its own: it tells a last lone unit from a pair ending in 0, and
    // where the id ends and the key begins.
    a = Math.imul(a ^ n, 0x9e3779b1);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b ^ n, 0x85ebca77);
    b = (b << 13) | (b >>> 19);
    this.hi = a;
    this.lo = b;
  }

  /**
   * An integer up to 2^53 as its low and high 32-bit words, then a length no string has (a
   * string's is below 2^30): a number never reads as a string of the same units.
   */
  private absorbNumber(x: number): void {
    this.step(x >>> 0);
    this.step((x / 0x1_0000_0000) >>> 0);
    this.step(0x8000_0000);
  }

  /** One 32-bit word into both lanes, as absorb() takes each pair of units. */
  private step(c: number): void {
    const a = Math.imul(this.hi ^ c, 0x9e3779b1);
    const b = Math.imul(this.lo ^ c, 0x85ebca77);
    this.hi = (a << 15) | (a >>> 17);
    this.lo = (b << 13) | (b >>> 19);
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
