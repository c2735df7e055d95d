import { chainEntry, genesisHash, verifyChain, type AuditEntry } from '../../core/audit-chain';

const key = 'k'.repeat(32);

/** A ledger of n entries, each keyed with `keyOf(seq)` (undefined: the unkeyed form written before keying). */
function ledger(n: number, keyOf: (seq: number) => string | undefined = () => key): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let prev = genesisHash;
  for (let seq = 1; seq <= n; seq += 1) {
    const entry = chainEntry({ org_id: 'org_a', seq, at: 1000 + seq, actor: 'key_1', action: 'x', target: `t${seq}`, details: '{}' }, prev, keyOf(seq));
    entries.push(entry);
    prev = entry.hash;
  }
  return entries;
}

/** What someone who can write the database but holds no key can do: rebuild every hash from a changed entry on. */
function rebuiltFrom(entries: AuditEntry[], index: number, change: Partial<AuditEntry>, forgerKey: string | undefined): AuditEntry[] {
  const out = entries.slice(0, index);
  let prev = index === 0 ? genesisHash : entries[index - 1]!.hash;
  for (const [i, e] of entries.slice(index).entries()) {
    const entry = chainEntry(i === 0 ? { ...e, ...change } : e, prev, forgerKey);
    out.push(entry);
    prev = entry.hash;
  }
  return out;
}

describe('audit chain', () => {
  test('an untouched ledger verifies', () => {
    expect(verifyChain(ledger(5), key)).toMatchObject({ valid: true, entries: 5 });
  });

  test('an empty ledger verifies', () => {
    expect(verifyChain([], key)).toMatchObject({ valid: true, entries: 0 });
  });

  test('a changed field breaks the chain at that entry', () => {
    const entries = ledger(5);
    entries[2] = { ...entries[2]!, target: 'forged' };
    expect(verifyChain(entries, key)).toMatchObject({ valid: false, broken_at: 3, reason: 'entry content does not match its hash' });
  });

  test('a re-hashed forged entry still breaks the link of the next one', () => {
    const entries = ledger(5);
    const forged = chainEntry({ ...entries[2]!, target: 'forged' }, entries[2]!.prev_hash, key);
    entries[2] = forged;
    expect(verifyChain(entries, key)).toMatchObject({ valid: false, broken_at: 4, reason: 'link to previous entry broken' });
  });

  test('a removed entry is a sequence gap', () => {
    const entries = ledger(5);
    entries.splice(1, 1);
    expect(verifyChain(entries, key)).toMatchObject({ valid: false, broken_at: 2 });
  });

  test('a long ledger verifies in chunks from the position the previous chunk ended at', () => {
    const entries = ledger(10);
    const first = verifyChain(entries.slice(0, 4), key);
    expect(verifyChain(entries.slice(4), key, first.next)).toMatchObject({ valid: true, entries: 6 });
  });

  test('a chain rebuilt consistently without the key does not verify', () => {
    const forged = rebuiltFrom(ledger(5), 2, { target: 'forged' }, 'a guessed key of thirty-two chars');
    expect(verifyChain(forged, key)).toMatchObject({ valid: false, broken_at: 3, reason: 'entry content does not match its hash' });
  });

  test('a chain rebuilt in the unkeyed form after keyed entries does not verify', () => {
    const forged = rebuiltFrom(ledger(5), 2, { target: 'forged' }, undefined);
    expect(verifyChain(forged, key)).toMatchObject({ valid: false, broken_at: 3, reason: 'an unkeyed entry after a keyed one' });
  });

  test('entries written before keying still verify as the beginning of a keyed chain', () => {
    expect(verifyChain(ledger(6, (seq) => (seq <= 3 ? undefined : key)), key)).toMatchObject({ valid: true, entries: 6 });
  });

  test('keyed entries do not verify without the key', () => {
    expect(verifyChain(ledger(2), undefined)).toMatchObject({ valid: false, broken_at: 1, reason: 'a keyed entry, and no AUDIT_CHAIN_KEY to check it' });
  });
});
