import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, ToolFailedError } from '../../../../src/errors.js';
import { runTool } from '../../../../src/plugins/module/run-tool.js';
import { chargeOnce, type Charge } from '../../../fixtures/typed/charge.js';

/**
 * A payment provider that records every charge it makes. `hold` keeps the next charge pending
 * until released, and says when it has begun (the run holding the claim is charging).
 */
function provider(): { charge: Charge; made: string[]; hold(): { begun: Promise<void>; release: () => void } } {
  const made: string[] = [];
  let held: { begin: () => void; released: Promise<void> } | undefined;
  return {
    made,
    hold() {
      let begin!: () => void;
      let release!: () => void;
      const begun = new Promise<void>((resolve) => (begin = resolve));
      held = { begin, released: new Promise((resolve) => (release = resolve)) };
      return { begun, release };
    },
    async charge(account, cents, key) {
      const wait = held;
      held = undefined;
      wait?.begin();
      await wait?.released;
      made.push(`${account}:${cents}:${key}`);
      return `r-${made.length}`;
    },
  };
}

describe('a typed tool that charges once per request id', () => {
  let ledger: string;
  beforeEach(async () => {
    ledger = await mkdtemp(join(tmpdir(), 'charge-ledger-'));
  });
  afterEach(() => rm(ledger, { recursive: true, force: true }));

  it('charges once when the same request runs twice, and answers the second run with the first receipt', async () => {
    const payments = provider();
    const tool = chargeOnce(payments.charge, ledger);
    const first = await runTool(tool, { account: 'acme', cents: 500 }, { requestId: 'req-1' });
    const again = await runTool(tool, { account: 'acme', cents: 500 }, { requestId: 'req-1' });
    expect(first).toBe('charged 500 cents to acme, receipt r-1');
    expect(again).toBe(first);
    expect(payments.made).toEqual(['acme:500:req-1']);
    // Another request is another charge.
    expect(await runTool(tool, { account: 'acme', cents: 500 }, { requestId: 'req-2' })).toBe('charged 500 cents to acme, receipt r-2');
    expect(payments.made).toHaveLength(2);
  });

  it('asks a copy that runs while the first is still charging to come back later, and charges once', async () => {
    const payments = provider();
    const tool = chargeOnce(payments.charge, ledger);
    const { begun, release } = payments.hold();
    const first = runTool(tool, { account: 'acme', cents: 700 }, { requestId: 'req-3' });
    await begun;
    const copy = await runTool(tool, { account: 'acme', cents: 700 }, { requestId: 'req-3' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(copy).toMatchObject({ code: ErrorCode.Unavailable, retriable: true });
    release();
    expect(await first).toBe('charged 700 cents to acme, receipt r-1');
    expect(await runTool(tool, { account: 'acme', cents: 700 }, { requestId: 'req-3' })).toBe('charged 700 cents to acme, receipt r-1');
    expect(payments.made).toEqual(['acme:700:req-3']);
  });

  it('lets a redelivery try again when the charge failed', async () => {
    let declined = true;
    const made: string[] = [];
    const tool = chargeOnce(async (account, cents, key) => {
      if (declined) throw new ToolFailedError('the provider is down');
      made.push(key);
      return 'r-ok';
    }, ledger);
    await expect(runTool(tool, { account: 'acme', cents: 100 }, { requestId: 'req-4' })).rejects.toThrow('the provider is down');
    declined = false;
    expect(await runTool(tool, { account: 'acme', cents: 100 }, { requestId: 'req-4' })).toBe('charged 100 cents to acme, receipt r-ok');
    expect(made).toEqual(['req-4']);
  });
});
