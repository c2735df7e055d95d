import type { Approver } from '../../core/principal';
import type { KeyRecord } from '../../storage/keys-repo';
import { approverVerdict, type ApproverFacts } from '../../workers/governance/activities/approval-activities';
import type { DecisionSubject } from '../../workflows/decision-contract';

/** The approver check as a pure function: four eyes between persons, over plain facts. */
const now = Date.UTC(2026, 10, 28, 12, 0, 0);
const alice = { subject: 'alice', name: 'Alice', email: '' };
const bob = { subject: 'bob', name: 'Bob', email: '' };
const replay: DecisionSubject = { kind: 'replay', orgId: 'org_a', id: 'rep_1', requestedBy: 'key_requester' };

function key(over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    key_id: 'key_bob', org_id: 'org_a', key_hash: '', name: 'bob approves', role: 'approver', created_at: 0, expires_at: 0, revoked_at: 0,
    created_by: 'platform-admin', version: 1, owner_subject: 'bob', owner_name: 'Bob', owner_email: '', ...over,
  };
}

const withKey = (k: KeyRecord, person = bob): Approver => ({ approverKeyId: k.key_id, approverPerson: person, approverVia: 'api_key' });
const facts = (over: Partial<ApproverFacts> = {}): ApproverFacts => ({ approver: withKey(key()), key: key(), requester: alice, ...over });
const reason = (verdict: ReturnType<typeof approverVerdict>) => (verdict.ok ? 'ok' : verdict.reason);

describe('approver verdict', () => {
  test("another person's approver key may decide", () => {
    expect(approverVerdict(replay, facts(), now)).toEqual({ ok: true });
  });

  test('the requester decides nothing of their own with another of their keys', () => {
    const own = key({ owner_subject: 'alice', owner_name: 'Alice' });
    const verdict = approverVerdict(replay, facts({ approver: withKey(own, alice), key: own }), now);
    expect(verdict).toEqual({ ok: false, reason: 'requester', message: expect.stringContaining('person who requested it') as unknown });
  });

  test('the playbook author decides nothing of their own automation run', () => {
    const run: DecisionSubject = { ...replay, kind: 'automation' };
    const own = key({ owner_subject: 'alice' });
    expect(approverVerdict(run, facts({ approver: withKey(own, alice), key: own }), now)).toMatchObject({ reason: 'requester', message: expect.stringContaining('playbook version') as unknown });
  });

  test('a service key decides nothing', () => {
    const service = key({ owner_subject: 'service' });
    expect(reason(approverVerdict(replay, facts({ approver: { ...withKey(service), approverPerson: null }, key: service }), now))).toBe('service_key');
  });

  test('a person who changed a policy within the cooldown may not decide', () => {
    const verdict = approverVerdict(replay, facts({ policyChange: { at: now - 60_000, cooldownMinutes: 60 } }), now);
    expect(verdict).toMatchObject({ reason: 'policy_author', message: expect.stringContaining('60 minutes') as unknown });
  });

  test('a decision naming another person than its key owner is refused as unproven', () => {
    expect(reason(approverVerdict(replay, facts({ approver: withKey(key(), alice) }), now))).toBe('invalid_token');
  });

  test('the key that requested the run is refused as the requester, whoever owns it', () => {
    const requesting = key({ key_id: 'key_requester' });
    expect(reason(approverVerdict(replay, facts({ approver: withKey(requesting), key: requesting }), now))).toBe('requester');
  });

  test.each<[string, Partial<KeyRecord> | undefined, string]>([
    ['an unknown key', undefined, 'unknown_key'],
    ["another workspace's key", { org_id: 'org_b' }, 'unknown_key'],
    ['a revoked key', { revoked_at: now - 1 }, 'revoked'],
    ['an expired key', { expires_at: now }, 'expired'],
    ['an operator key (operators no longer approve)', { role: 'operator' }, 'not_an_approver'],
    ['an admin key (admins no longer approve)', { role: 'admin' }, 'not_an_approver'],
  ])('%s is refused', (_name, over, expected) => {
    const k = over ? key(over) : undefined;
    expect(reason(approverVerdict(replay, facts({ key: k }), now))).toBe(expected);
  });

  test("a person's session decides as that person, without a key", () => {
    const session: Approver = { approverKeyId: 'session:s1', approverPerson: bob, approverVia: 'session' };
    expect(approverVerdict(replay, { approver: session, requester: alice }, now)).toEqual({ ok: true });
    expect(reason(approverVerdict(replay, { approver: { ...session, approverPerson: alice }, requester: alice }, now))).toBe('requester');
  });

  test('a subject requested through a sign-in whose person it did not record is decided by nobody: no one can be shown to be another person', () => {
    const session: Approver = { approverKeyId: 'session:s1', approverPerson: bob, approverVia: 'session' };
    expect(reason(approverVerdict(replay, { approver: session, requester: 'unknown' }, now))).toBe('requester');
  });
});
