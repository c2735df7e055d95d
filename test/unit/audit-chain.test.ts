import { chainEntry, genesisHash, verifyChain, type AuditEntry } from '../../core/audit-chain';

function ledger(n: number): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let prev = genesisHash;
  for (let seq = 1; seq <= n; seq += 1) {
    const entry = chainEntry({ org_id: 'org_a', seq, at: 1000 + seq, actor: 'key_1', action: 'x', target: `t${seq}`, details: '{}' }, prev);
    entries.push(entry);
    prev = entry.hash;
  }
  return entries;
}

describe('audit chain', () => {
  test('an untouched ledger verifies', () => {
    expect(verifyChain(ledger(5))).toMatchObject({ valid: true, entries: 5 });
  });

  test('an empty ledger verifies', () => {
    expect(verifyChain([])).toMatchObject({ valid: true, entries: 0 });
  });

  test('a changed field breaks the chain at that entry', () => {
    const entries = ledger(5);
    entries[2] = { ...entries[2]!, target: 'forged' };
    expect(verifyChain(entries)).toMatchObject({ valid: false, broken_at: 3, reason: 'entry content does not match its hash' });
  });

  test('a re-hashed forged entry still breaks the link of the next one', () => {
    const entries = ledger(5);
    const forged = chainEntry({ ...entries[2]!, target: 'forged' }, entries[2]!.prev_hash);
    entries[2] = forged;
    expect(verifyChain(entries)).toMatchObject({ valid: false, broken_at: 4, reason: 'link to previous entry broken' });
  });

  test('a removed entry is a sequence gap', () => {
    const entries = ledger(5);
    entries.splice(1, 1);
    expect(verifyChain(entries)).toMatchObject({ valid: false, broken_at: 2 });
  });

  test('a long ledger verifies in chunks from the position the previous chunk ended at', () => {
    const entries = ledger(10);
    const first = verifyChain(entries.slice(0, 4));
    expect(verifyChain(entries.slice(4), first.next)).toMatchObject({ valid: true, entries: 6 });
  });
});
