import { Registry } from 'prom-client';
import { verifyChain, type AuditEntry } from '../../core/audit-chain';
import { AppError } from '../../core/errors';
import { actorPersonOf, AuditLedger, type AuditEntryStore, type AuditHeadStore } from '../../application/audit-ledger';
import { actingAs } from '../../application/acting-person';

/**
 * The ledger's compare-and-set on plain-object heads and entries: the heads
 * behave like the JetStream key-value bucket (a claim succeeds only at the
 * revision it read), the entries like the ClickHouse table.
 */
function fakeHeads() {
  const heads = new Map<string, { entry: AuditEntry; entries: AuditEntry[]; revision: number }>();
  const hooks = {
    claims: 0,
    /** Runs before a claim is decided: another appender may move the head meanwhile. */
    beforeClaim: undefined as undefined | (() => Promise<void>),
    /** Every claim loses, as when appenders without end get there first. */
    alwaysLose: false,
  };
  const store: AuditHeadStore = {
    read: (orgId) => Promise.resolve(heads.get(orgId)),
    claim: async (orgId, entries, revision) => {
      hooks.claims += 1;
      const interject = hooks.beforeClaim;
      hooks.beforeClaim = undefined;
      await interject?.();
      if (hooks.alwaysLose || heads.get(orgId)?.revision !== revision) return false;
      heads.set(orgId, { entry: entries.at(-1)!, entries: [...entries], revision: (revision ?? 0) + 1 });
      return true;
    },
  };
  return { store, heads, hooks };
}

function fakeEntries() {
  const rows: AuditEntry[] = [];
  const hooks = { failAppend: undefined as Error | undefined, inserts: 0 };
  const ofOrg = (orgId: string) => rows.filter((e) => e.org_id === orgId).sort((a, b) => a.seq - b.seq);
  const store: AuditEntryStore = {
    append: (entries) => {
      if (hooks.failAppend) return Promise.reject(hooks.failAppend);
      hooks.inserts += 1;
      rows.push(...entries);
      return Promise.resolve();
    },
    last: (orgId) => Promise.resolve(ofOrg(orgId).at(-1)),
    has: (orgId, seq) => Promise.resolve(rows.some((e) => e.org_id === orgId && e.seq === seq)),
    hasAction: (orgId, action, target) => Promise.resolve(rows.some((e) => e.org_id === orgId && e.action === action && e.target === target)),
    page: (orgId, { limit, beforeSeq }) =>
      Promise.resolve(
        ofOrg(orgId)
          .reverse()
          .filter((e) => beforeSeq === undefined || e.seq < beforeSeq)
          .slice(0, limit),
      ),
    ascending: (orgId, { fromSeq, limit }) => Promise.resolve(ofOrg(orgId).filter((e) => e.seq >= fromSeq).slice(0, limit)),
  };
  return { store, rows, ofOrg, hooks };
}

const event = (target: string, orgId = 'org_a') => ({ orgId, actor: 'key_test', action: 'test.append', target });
const chainKey = 'a chain key of thirty-two characters';
const ledgerOver = (entries: AuditEntryStore, heads: AuditHeadStore) => new AuditLedger(entries, heads, new Registry(), chainKey, () => 1_700_000_000_000);

describe('audit ledger', () => {
  test('appends of one org form a chain from seq 1, each linked by hash to the one before', async () => {
    const entries = fakeEntries();
    const ledger = ledgerOver(entries.store, fakeHeads().store);
    for (const target of ['a', 'b', 'c']) await ledger.append(event(target));
    expect(entries.ofOrg('org_a').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 3 });
  });

  test('a lost claim re-reads the head and chains after the entry that won', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const ours = ledgerOver(entries.store, heads.store);
    const theirs = ledgerOver(entries.store, heads.store);
    let won: AuditEntry | undefined;
    heads.hooks.beforeClaim = async () => {
      won = await theirs.append(event('theirs'));
    };
    const entry = await ours.append(event('ours'));
    expect(won).toMatchObject({ seq: 1, target: 'theirs' });
    expect(entry).toMatchObject({ seq: 2, target: 'ours', prev_hash: won!.hash });
    expect(heads.hooks.claims).toBe(3);
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 2 });
  });

  test('two appenders appending to one org at once never take the same seq', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const ledgers = [ledgerOver(entries.store, heads.store), ledgerOver(entries.store, heads.store)];
    const appended = await Promise.all(Array.from({ length: 40 }, (_, i) => ledgers[i % 2]!.append(event(`t${i}`))));
    expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 40 });
  });

  test('appends of one org that waited behind one another are chained, claimed and stored together, each answered its own entry', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const ledger = ledgerOver(entries.store, heads.store);
    const appended = await Promise.all(['a', 'b', 'c', 'd'].map((target) => ledger.append(event(target))));
    expect(appended.map((e) => [e.seq, e.target])).toEqual([[1, 'a'], [2, 'b'], [3, 'c'], [4, 'd']]);
    // The first goes alone; the three that waited behind it go as one batch.
    expect([heads.hooks.claims, entries.hooks.inserts]).toEqual([2, 2]);
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 4 });
  });

  test('a batch whose appender died between claiming and storing it is written whole by the next append', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const dying = ledgerOver(entries.store, heads.store);
    const first = dying.append(event('stored'));
    // Asked while the first is in flight: the three go as one batch after it, and its insert fails.
    const batch = Promise.allSettled(['lost-1', 'lost-2', 'lost-3'].map((target) => dying.append(event(target))));
    await first;
    entries.hooks.failAppend = new Error('the process died');
    expect((await batch).map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(heads.heads.get('org_a')?.entries.map((e) => e.target)).toEqual(['lost-1', 'lost-2', 'lost-3']);
    entries.hooks.failAppend = undefined;
    await ledgerOver(entries.store, heads.store).append(event('next'));
    expect(entries.ofOrg('org_a').map((e) => e.target)).toEqual(['stored', 'lost-1', 'lost-2', 'lost-3', 'next']);
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 5 });
  });

  test('a head whose appender died before storing it is written by the next append', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    entries.hooks.failAppend = new Error('the process died');
    await expect(ledgerOver(entries.store, heads.store).append(event('lost'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(heads.heads.get('org_a')?.entry).toMatchObject({ seq: 1, target: 'lost' });
    entries.hooks.failAppend = undefined;
    await ledgerOver(entries.store, heads.store).append(event('next'));
    expect(entries.ofOrg('org_a').map((e) => [e.seq, e.target])).toEqual([
      [1, 'lost'],
      [2, 'next'],
    ]);
    expect(verifyChain(entries.ofOrg('org_a'), chainKey)).toMatchObject({ valid: true, entries: 2 });
  });

  test('an entry whose appender died between claiming and storing it counts as recorded, and is stored by asking', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    entries.hooks.failAppend = new Error('the process died');
    await expect(ledgerOver(entries.store, heads.store).append(event('lost'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    entries.hooks.failAppend = undefined;
    const ledger = ledgerOver(entries.store, heads.store);
    expect(await ledger.recorded('org_a', 'test.append', 'lost')).toBe(true);
    expect(await ledger.recorded('org_a', 'test.append', 'never')).toBe(false);
    expect(entries.ofOrg('org_a').map((e) => e.target)).toEqual(['lost']);
  });

  test('an append gives up with 503 UNAVAILABLE after 50 lost claims and stores nothing', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    heads.hooks.alwaysLose = true;
    const err = await ledgerOver(entries.store, heads.store).append(event('never')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', status: 503, message: 'audit ledger (too many concurrent appends) is unavailable, retry later' });
    expect(heads.hooks.claims).toBe(50);
    expect(entries.rows).toEqual([]);
  });

  test('a failure of the heads reaches the caller as 503 UNAVAILABLE with its cause', async () => {
    const cause = new Error('nats: timeout');
    const heads: AuditHeadStore = { read: () => Promise.reject(cause), claim: () => Promise.resolve(true) };
    const err = await ledgerOver(fakeEntries().store, heads).append(event('x')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', status: 503, cause });
  });

  test('an org whose entries predate the heads chains after the last stored entry', async () => {
    const entries = fakeEntries();
    const seed = ledgerOver(entries.store, fakeHeads().store);
    await seed.append(event('old-1'));
    await seed.append(event('old-2'));
    const entry = await ledgerOver(entries.store, fakeHeads().store).append(event('new'));
    expect(entry).toMatchObject({ seq: 3, prev_hash: entries.ofOrg('org_a')[1]!.hash });
  });

  test("verify writes the head's batch its appender did not store and finds the chain whole", async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const dying = ledgerOver(entries.store, heads.store);
    const first = dying.append(event('stored'));
    const batch = Promise.allSettled(['claimed-1', 'claimed-2'].map((target) => dying.append(event(target))));
    await first;
    entries.hooks.failAppend = new Error('the process died');
    await batch;
    entries.hooks.failAppend = undefined;
    await expect(ledgerOver(entries.store, heads.store).verify('org_a', { maxEntries: 100 })).resolves.toEqual({ valid: true, entries: 3, complete: true });
    expect(entries.ofOrg('org_a').map((e) => e.target)).toEqual(['stored', 'claimed-1', 'claimed-2']);
  });

  test('verify writes the head entry its appender did not store and finds the chain whole', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    await ledgerOver(entries.store, heads.store).append(event('stored'));
    entries.hooks.failAppend = new Error('the process died');
    await ledgerOver(entries.store, heads.store).append(event('claimed only')).catch(() => undefined);
    entries.hooks.failAppend = undefined;
    await expect(ledgerOver(entries.store, heads.store).verify('org_a', { maxEntries: 100 })).resolves.toEqual({ valid: true, entries: 2, complete: true });
    expect(entries.ofOrg('org_a').map((e) => e.target)).toEqual(['stored', 'claimed only']);
  });

  test('verify reads at most maxEntries a call, and the next call resumes where it stopped, to the head', async () => {
    const entries = fakeEntries();
    const heads = fakeHeads();
    const ledger = ledgerOver(entries.store, heads.store);
    for (let i = 0; i < 5; i += 1) await ledger.append(event(`e${i}`));
    const reads: number[] = [];
    const ascending = entries.store.ascending.bind(entries.store);
    entries.store.ascending = (orgId, opts) => {
      reads.push(opts.limit);
      return ascending(orgId, opts);
    };
    const first = await ledger.verify('org_a', { maxEntries: 2 }, 10);
    expect(first).toMatchObject({ valid: true, entries: 2, complete: false, next: { seq: 3, prevHash: entries.ofOrg('org_a')[1]!.hash } });
    const second = await ledger.verify('org_a', { from: first.next, maxEntries: 2 }, 10);
    const third = await ledger.verify('org_a', { from: second.next, maxEntries: 2 }, 10);
    expect([second, third]).toMatchObject([{ valid: true, entries: 2, complete: false }, { valid: true, entries: 1, complete: true }]);
    expect(Math.max(...reads)).toBeLessThanOrEqual(2);
  });

  test('a verification resumed past a changed entry finds the break there', async () => {
    const entries = fakeEntries();
    const ledger = ledgerOver(entries.store, fakeHeads().store);
    for (let i = 0; i < 4; i += 1) await ledger.append(event(`e${i}`));
    const first = await ledger.verify('org_a', { maxEntries: 2 });
    entries.rows.find((e) => e.seq === 3)!.target = 'forged';
    await expect(ledger.verify('org_a', { from: first.next, maxEntries: 2 })).resolves.toMatchObject({ valid: false, broken_at: 3, complete: true });
  });
});

describe('the actor person of ledger entries', () => {
  const alice = { subject: 'alice', name: 'Alice', email: 'alice@example.net' };
  const principal = { kind: 'workspace', keyId: 'key_test', orgId: 'org_a', roles: ['operator'], person: alice, via: 'api_key' } as const;
  const ledgerOf = () => {
    const entries = fakeEntries();
    return { entries, ledger: new AuditLedger(entries.store, fakeHeads().store, new Registry(), 'k'.repeat(32)) };
  };

  test("an entry names its actor's person in its hashed details, and the chain verifies", async () => {
    const { entries, ledger } = ledgerOf();
    const entry = await ledger.append({ ...event('t1'), person: alice });
    expect(actorPersonOf(entry)).toEqual(alice);
    expect(verifyChain(entries.ofOrg('org_a'), 'k'.repeat(32)).valid).toBe(true);
  });

  test('an entry appended while a request is served names the person of that request, when the actor is its credential', async () => {
    const { ledger } = ledgerOf();
    const [own, other] = await actingAs(principal, () => Promise.all([ledger.append(event('t1')), ledger.append({ ...event('t2'), actor: 'automation' })]));
    expect([actorPersonOf(own), actorPersonOf(other)]).toEqual([alice, null]);
  });

  test('an entry written before persons, with no person in its details, still verifies beside new ones and names no person', async () => {
    const { entries, ledger } = ledgerOf();
    const old = await ledger.append(event('before persons'));
    expect(old.details).toBe('{}');
    await ledger.append({ ...event('after'), person: alice });
    expect(actorPersonOf(old)).toBeNull();
    expect(verifyChain(entries.ofOrg('org_a'), 'k'.repeat(32)).valid).toBe(true);
  });
});
