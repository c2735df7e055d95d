import { approverFrom, approverOfPrincipal, platformAdmin, type Principal } from '../../core/principal';

const alice = { subject: 'alice', name: 'Alice', email: 'alice@example.net' };

describe('approvers', () => {
  test("a workspace principal's approver is its credential, its person and how it was proven", () => {
    const by: Principal = { kind: 'workspace', keyId: 'session:s1', orgId: 'org_a', roles: ['approver'], person: alice, via: 'session' };
    expect(approverOfPrincipal(by)).toEqual({ approverKeyId: 'session:s1', approverPerson: alice, approverVia: 'session' });
  });

  test('the platform admin is an approver with no person', () => {
    expect(approverOfPrincipal(platformAdmin)).toEqual({ approverKeyId: 'platform-admin', approverPerson: null, approverVia: 'api_key' });
  });

  test('a raw decision that names a person and a credential kind is read as it came', () => {
    expect(approverFrom({ approverKeyId: 'key_1', approverPerson: alice, approverVia: 'bearer', extra: 1 })).toEqual({
      approverKeyId: 'key_1', approverPerson: alice, approverVia: 'bearer',
    });
  });

  test.each([
    ['nothing', undefined],
    ['a string', 'key_1'],
    ['a person without a subject', { approverKeyId: 'key_1', approverPerson: { subject: '', name: 'A', email: '' } }],
    ['a person whose name is not text', { approverKeyId: 'key_1', approverPerson: { subject: 'a', name: 5, email: '' } }],
    ['an unknown credential kind', { approverKeyId: 'key_1', approverVia: 'password' }],
  ])('a raw decision carrying %s is read as a service key with no person', (_name, raw) => {
    const approver = approverFrom(raw);
    expect([approver.approverPerson, approver.approverVia]).toEqual([null, 'api_key']);
  });

  test('a credential id longer than any the API issues is read as none', () => {
    expect(approverFrom({ approverKeyId: 'k'.repeat(201) }).approverKeyId).toBe('');
  });
});
