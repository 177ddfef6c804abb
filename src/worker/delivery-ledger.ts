import { randomBytes } from 'node:crypto';
import { AnsweredKeys } from './answered-keys.js';

/**
 * A delivery being handled, by the fingerprint of its request id and delivery key. The
 * handler that claimed it gives it its outcome (begin) and hands it back when it settles.
 */
export class Handling<T = unknown> {
  /** Set by begin(), in the same turn as the claim: no other claim can come between. */
  outcome: Promise<T> | undefined = undefined;
  /** The next delivery being handled whose fingerprint has the same high half. */
  next: Handling<T> | undefined = undefined;
  constructor(
    readonly hi: number,
    readonly lo: number,
  ) {}
}

/**
 * The deliveries of a redelivering topic this worker is handling or has answered, by request
 * id and delivery key, so that a copy of one runs nothing: it settles as the first did, or is
 * acked at once. A delivery being handled is kept until it settles; the last `capacity`
 * answered are kept as fingerprints (answered-keys.ts), the oldest forgotten first. Both are
 * found by the fingerprint, taken once when claimed: no key string is made or hashed again
 * (docs/benchmarks-rationale.md). `T` is what a delivery's handling resolves to.
 *
 * A fingerprint can collide: then a first delivery reads as answered, is acked, and runs
 * nothing. With n keys remembered and a hash that spreads keys evenly, that chance is
 * n / 2^64 a delivery (5e-16 at 10,000). The hash is seeded per process, so a publisher
 * cannot compute in advance which ids collide with another agent's request (docs/security.md).
 */
export class DeliveryLedger<T = unknown> {
  /** Few at a time (the service's concurrency), by the fingerprint's high half; those that share it are chained. */
  private readonly handling = new Map<number, Handling<T>>();
  private handled = 0;
  private readonly answered: AnsweredKeys;
  private readonly seedHi: number;
  private readonly seedLo: number;
  /** The fingerprint hash() took last, in two halves: returning a pair would allocate. */
  private hi = 0;
  private lo = 0;

  /** `seed`: 8 bytes, for tests that must find two keys alike; a worker's is random. */
  constructor(capacity: number, seed: Buffer = randomBytes(8)) {
    this.answered = new AnsweredKeys(Math.max(0, capacity));
    this.seedHi = seed.readUInt32LE(0);
    this.seedLo = seed.readUInt32LE(4);
  }

  /**
   * `true` if answered, the first delivery's outcome while it is handled. Otherwise a new
   * Handling: the caller handles this delivery, and begin() and settle() follow with it.
   */
  claim(id: string, deliveryKey: string | number): Handling<T> | Promise<T> | true {
    this.hash(id, deliveryKey);
    const { hi, lo, answered } = this;
    const head = this.handling.get(hi);
    // The outcome is there: begin() follows a claim in the same turn.
    for (let h = head; h !== undefined; h = h.next) if (h.lo === lo && h.hi === hi) return h.outcome ?? true;
    if (answered.has(hi, lo)) return true;
    const h = new Handling<T>(hi, lo);
    h.next = head;
    this.handling.set(hi, h);
    this.handled++;
    return h;
  }

  /** The claimed delivery is being handled; `outcome` settles with it. */
  begin(h: Handling<T>, outcome: Promise<T>): void {
    h.outcome = outcome;
  }

  /** The delivery settled: remembered as answered, or forgotten (a redelivery of it must run). */
  settle(h: Handling<T>, answered: boolean): void {
    const head = this.handling.get(h.hi);
    if (head === h) {
      if (h.next === undefined) this.handling.delete(h.hi);
      else this.handling.set(h.hi, h.next);
    } else {
      let before = head;
      while (before !== undefined && before.next !== h) before = before.next;
      // Settled twice: the first settle took it out already.
      if (before === undefined) return;
      before.next = h.next;
    }
    this.handled--;
    if (answered) this.answered.add(h.hi, h.lo);
  }

  /** The fingerprint claim() takes of a delivery, as a pair: for tests, which must find two alike. */
  fingerprint(id: string, deliveryKey: string | number): readonly [number, number] {
    this.hash(id, deliveryKey);
    return [this.hi, this.lo];
  }

  /**
   * Takes the fingerprint of a request id and a delivery key into `hi` and `lo`, as if of the
   * one string they make with a separator, without making it. A key that is a number (the
   * native client's publish time) is taken as its two 32-bit words, not as its digits.
   */
  private hash(id: string, deliveryKey: string | number): void {
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

  /** Deliveries known: answered and being handled. */
  get size(): number {
    return this.handled + this.answered.size;
  }
}
