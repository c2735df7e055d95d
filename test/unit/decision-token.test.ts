import { DecisionTokens, decisionTokenTtlMs, type DecisionClaims } from '../../core/decision-token';

const key = 'k'.repeat(32);
const now = Date.UTC(2026, 10, 25, 12, 0, 0);
const claims: DecisionClaims = {
  orgId: 'org_a',
  runId: 'rep_00000000000000000001',
  workflowId: 'replay:org_a:rep_00000000000000000001',
  approverKeyId: 'key_00000000000000000001',
  approverPerson: { subject: 'alice', name: 'Alice', email: 'alice@example.net' },
  via: 'api_key',
  decision: 'approve',
};
const tokens = new DecisionTokens(key);

describe('decision tokens', () => {
  test('a token proves the decision it was signed for until it expires', () => {
    const token = tokens.mint(claims, now);
    expect(token).toMatch(/^dt2\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.verify(token, claims, now)).toEqual({ ok: true });
    expect(tokens.verify(token, claims, now + decisionTokenTtlMs - 1)).toEqual({ ok: true });
  });

  test('a token is refused from its expiry on', () => {
    const token = tokens.mint(claims, now);
    expect(tokens.verify(token, claims, now + decisionTokenTtlMs)).toEqual({ ok: false, message: expect.stringContaining('expired') as unknown });
  });

  test.each<[string, Partial<DecisionClaims>]>([
    ['another workspace', { orgId: 'org_b' }],
    ['another run', { runId: 'rep_00000000000000000002' }],
    ['another workflow', { workflowId: 'replay:org_a:rep_00000000000000000002' }],
    ['another key', { approverKeyId: 'key_00000000000000000002' }],
    ['another person', { approverPerson: { subject: 'mallory', name: 'Alice', email: 'alice@example.net' } }],
    ["another person's name", { approverPerson: { subject: 'alice', name: 'Mallory', email: 'alice@example.net' } }],
    ['no person (a service key)', { approverPerson: null }],
    ['another kind of credential', { via: 'session' }],
    ['the other decision', { decision: 'deny' }],
  ])('a token signed for %s is refused', (_name, other) => {
    const token = tokens.mint(claims, now);
    expect(tokens.verify(token, { ...claims, ...other }, now)).toEqual({ ok: false, message: expect.stringContaining('not signed for this decision') as unknown });
  });

  test('a token signed under another key, or with its expiry moved, is refused', () => {
    expect(tokens.verify(new DecisionTokens('x'.repeat(32)).mint(claims, now), claims, now).ok).toBe(false);
    const [version, expiry, mac] = tokens.mint(claims, now - decisionTokenTtlMs).split('.');
    expect(tokens.verify(`${version}.${Number(expiry) + decisionTokenTtlMs}.${mac}`, claims, now).ok).toBe(false);
  });

  test.each([undefined, '', 'dt2', 'dt2.1.abc', `dt1.${now}.${'A'.repeat(43)}`, `dt2.${now}.${'A'.repeat(44)}`, 'key_00000000000000000001'])(
    'a missing or malformed token (%p) is refused',
    (token) => {
      expect(tokens.verify(token, claims, now).ok).toBe(false);
    },
  );

  test('fields cannot be shifted from one claim into the next', () => {
    const token = tokens.mint({ ...claims, orgId: 'org', runId: `_a${claims.runId}` }, now);
    expect(tokens.verify(token, { ...claims, orgId: 'org_a', runId: claims.runId }, now).ok).toBe(false);
  });

  test('a token of the version before persons (dt1) is refused', () => {
    const [, expiry, mac] = tokens.mint(claims, now).split('.');
    expect(tokens.verify(`dt1.${expiry}.${mac}`, claims, now).ok).toBe(false);
  });

  test('a signing key shorter than 32 characters is refused', () => {
    expect(() => new DecisionTokens('short')).toThrow(/DECISION_SIGNING_KEY/);
  });
});
