/**
 * Property-based tests with fast-check: one seed per test file, random unless
 * TOOLWIRE_FC_SEED gives one, printed once; each property logs its runs and the seed.
 *
 * Replay a failure: `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit <file>`; with
 * the same seed and runs, every property of the file sees the same inputs again. fast-check's
 * own failure report also prints the seed and the path of the shrunk counterexample.
 */
import fc from 'fast-check';

function seedFromEnv(): number {
  const text = process.env['TOOLWIRE_FC_SEED'];
  if (text === undefined || text === '') return (Date.now() ^ Math.floor(Math.random() * 0x1_0000_0000)) | 0;
  const seed = Number(text);
  if (!Number.isInteger(seed)) throw new Error(`TOOLWIRE_FC_SEED must be an integer, got ${JSON.stringify(text)}`);
  return seed;
}

export const seed = seedFromEnv();
fc.configureGlobal({ seed });
console.info(`fast-check seed ${seed} (replay with TOOLWIRE_FC_SEED=${seed})`);

/**
 * A property test's time limit. Its runs are CPU work whose length is the machine's share of a
 * core: 500 runs took 12-23 s on a loaded 2-core machine, past vitest's 10 s default. Only a
 * hang should fail it.
 */
export const PROPERTY_TIMEOUT_MS = 120_000;

/** Check one property for `numRuns` inputs; says how many ran, and with which seed. */
export function checkProperty<T>(name: string, property: fc.IProperty<T>, numRuns: number): void {
  fc.assert(property, { numRuns });
  console.info(`property "${name}": ${numRuns} runs passed (seed ${seed})`);
}

export async function checkAsyncProperty<T>(name: string, property: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  await fc.assert(property, { numRuns });
  console.info(`property "${name}": ${numRuns} runs passed (seed ${seed})`);
}

/** One UTF-16 unit of any value, lone surrogates included, weighted towards the awkward ones. */
export const anyUnit: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), weight: 4 },
  { arbitrary: fc.constantFrom('"', '\\', '\n', '\r', '\u0000', '\u2028', '\ufeff', '/', '{', '}', ':', '?', '#', '%'), weight: 2 },
  { arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), weight: 2 },
);

/** Text of any UTF-16 units, lone surrogates included. */
export function anyText(maxLength = 40): fc.Arbitrary<string> {
  return fc.string({ unit: anyUnit, maxLength });
}
