import { createHmac } from 'node:crypto';
import type { Incident } from '../../core/correlation';
import { allowedHostSet, defaultRetrySchedule, isInternalAddress, pickAddress, retryDelayMs, urlRefusal } from '../../core/outbound';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { open, seal, SecretBoxError } from '../../core/secret-box';
import { incidentEventTypesOf, recomputeEvents, replayEvents, replayPayload, testEvent, type ReplayFacts } from '../../core/webhook-events';
import { newSecret, signatureHeaders, verifySignature } from '../../core/webhook-signature';

const incident = (over: Partial<Incident> = {}): Incident =>
  ({
    id: 'inc_00000000000000000001',
    org_id: 'org_a',
    service: 'edge',
    environment: 'prod',
    region: 'eu',
    severity: 'high',
    state: 'open',
    source: 'deterministic_engine',
    rule: 'signal',
    escalations: [],
    first_seen: 1_000,
    last_seen: 2_000,
    signal_count: 1,
    kinds: ['bgp'],
    max_latency_ms: 0,
    total_bytes: 0,
    version: 1,
    rules_version: 0,
    ...over,
  });

describe('webhook events from incident changes', () => {
  test('a new incident is opened; a critical new one is opened and escalated', () => {
    expect(incidentEventTypesOf(undefined, incident())).toEqual(['incident.opened']);
    expect(incidentEventTypesOf(undefined, incident({ severity: 'critical' }))).toEqual(['incident.opened', 'incident.escalated']);
  });

  test('a recomputation that changes neither state nor severity notifies nobody', () => {
    expect(incidentEventTypesOf(incident(), incident({ signal_count: 5, version: 5 }))).toEqual([]);
    expect(incidentEventTypesOf(incident({ severity: 'critical' }), incident({ severity: 'critical' }))).toEqual([]);
  });

  test('each transition notifies once, in its own type', () => {
    expect(incidentEventTypesOf(incident(), incident({ severity: 'critical' }))).toEqual(['incident.escalated']);
    expect(incidentEventTypesOf(incident(), incident({ state: 'acknowledged' }))).toEqual(['incident.acknowledged']);
    expect(incidentEventTypesOf(incident({ state: 'acknowledged' }), incident({ state: 'resolved' }))).toEqual(['incident.resolved']);
    expect(incidentEventTypesOf(incident({ state: 'resolved' }), incident({ state: 'resolved' }))).toEqual([]);
  });

  test('event ids depend on the change, not on when or how often it was derived', () => {
    const stored = new Map<string, Incident>();
    const a = recomputeEvents([{ incident: incident({ signal_count: 2 }), superseded: false }], stored, 10);
    const b = recomputeEvents([{ incident: incident({ signal_count: 3 }), superseded: false }], stored, 99);
    expect(a.map((e) => e.id)).toEqual(b.map((e) => e.id));
    expect(a[0]).toMatchObject({ specversion: '1.0', type: 'incident.opened', subject: incident().id, source: '/orgs/org_a/incidents', datacontenttype: 'application/json', workspace: 'org_a' });
    expect(new Set([...a, ...recomputeEvents([{ incident: incident({ state: 'acknowledged' }), superseded: false }], new Map([[incident().id, incident()]]), 1)].map((e) => e.id)).size).toBe(2);
  });

  test('an incident that moves to a new id (a late, earlier signal) is not opened again', () => {
    const old = incident({ first_seen: 1_000 });
    const moved = incident({ id: 'inc_00000000000000000002', first_seen: 500, severity: 'critical' });
    const events = recomputeEvents([{ incident: moved, superseded: false }, { incident: old, superseded: true }], new Map([[old.id, old]]), 1);
    expect(events.map((e) => e.type)).toEqual(['incident.escalated']);
    expect(events[0]!.data).toMatchObject({ id: moved.id, previous_id: old.id });
  });

  test('replay states notify only when they are one of the four event types', () => {
    const replay = (status: ReplayFacts['status']): ReplayFacts => ({
      replay_id: 'rep_1', incident_id: 'inc_1', status, requested_by: 'key_1', requested_by_person: null, requested_at: 0, updated_at: 0, window_minutes: 10, approvals: [], error: null, report: null,
      decision_deadline: null, approval_policies: [],
    });
    expect(replayEvents('org_a', replay('running'), 1)).toEqual([]);
    for (const s of ['awaiting_approval', 'completed', 'denied', 'expired'] as const) {
      const [e] = replayEvents('org_a', replay(s), 1);
      expect(e).toMatchObject({ type: `replay.${s}`, subject: 'rep_1', data: { replay_id: 'rep_1', status: s, requested_at: '1970-01-01T00:00:00.000Z' } });
    }
  });

  test("a replay event carries the approval gate's deadline as ISO 8601, as the API shows it", () => {
    const [e] = replayEvents('org_a', {
      replay_id: 'rep_1', incident_id: 'inc_1', status: 'awaiting_approval', requested_by: 'key_1', requested_by_person: null, requested_at: 0, updated_at: 0, window_minutes: 10,
      approvals: [], error: null, report: null, decision_deadline: 60_000, approval_policies: ['pol_1'],
    }, 1);
    expect(e!.data).toMatchObject({ decision_deadline: '1970-01-01T00:01:00.000Z', approval_policies: ['pol_1'] });
  });

  test('a replay event carries the replay as the API shows it, and nothing the store keeps for itself', () => {
    const stored = {
      org_id: 'org_a', version: 7, replay_id: 'rep_1', incident_id: 'inc_1', status: 'completed' as const, requested_by: 'key_1', requested_by_person: null, requested_at: 0,
      updated_at: 1_000, window_minutes: 10, approvals: [], error: null, report: { parity: true }, decision_deadline: null, approval_policies: [],
    };
    const [e] = replayEvents('org_a', stored, 1);
    expect(e!.data).toEqual(replayPayload(stored));
    expect(e!.data).not.toHaveProperty('org_id');
    expect(e!.data).toMatchObject({ updated_at: '1970-01-01T00:00:01.000Z' });
    expect(e!.data).not.toHaveProperty('version');
  });

  test('every test event has a fresh id', () => {
    expect(testEvent('o', 'whk_1', 'a', 1).id).not.toBe(testEvent('o', 'whk_1', 'b', 1).id);
  });
});

describe('webhook signatures', () => {
  const body = JSON.stringify({ hello: 'world' });
  test('the signature is Standard Webhooks: base64 HMAC-SHA256 of id.timestamp.body under the decoded secret', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signatureHeaders(secret, 'whe_1', 1_700_000_000, body);
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`whe_1.1700000000.${body}`).digest('base64');
    expect(headers).toEqual({ 'webhook-id': 'whe_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${expected}` });
  });

  test('a receiver accepts the signed body and refuses a changed body, another secret or an old timestamp', () => {
    const secret = newSecret();
    const h = signatureHeaders(secret, 'whe_1', 1_000, body);
    const given = { id: h['webhook-id']!, timestamp: h['webhook-timestamp']!, signature: h['webhook-signature']! };
    expect(verifySignature(secret, given, body, 1_010)).toBe(true);
    expect(verifySignature(secret, given, body + ' ', 1_010)).toBe(false);
    expect(verifySignature(newSecret(), given, body, 1_010)).toBe(false);
    expect(verifySignature(secret, given, body, 1_000 + 301)).toBe(false);
    expect(verifySignature(secret, { ...given, signature: `v1,bogus ${given.signature}` }, body, 1_010)).toBe(true);
  });

  const owner = { orgId: 'org_a', id: 'whk_1' };
  const keys = { current: 'a key of sixteen chars' };

  test('secrets are sealed at rest and open for their owner with the key', () => {
    const secret = newSecret();
    const sealed = seal(secret, keys, owner);
    expect(sealed).not.toContain(secret.slice(6));
    expect(open(sealed, keys, owner)).toBe(secret);
  });

  test('each sealing derives its own key: one secret sealed twice gives two values', () => {
    const secret = newSecret();
    expect(seal(secret, keys, owner)).not.toBe(seal(secret, keys, owner));
  });

  test('a sealed secret copied onto another webhook or workspace does not open', () => {
    const sealed = seal(newSecret(), keys, owner);
    expect(() => open(sealed, keys, { orgId: 'org_a', id: 'whk_2' })).toThrow(SecretBoxError);
    expect(() => open(sealed, keys, { orgId: 'org_b', id: 'whk_1' })).toThrow(SecretBoxError);
  });

  test('a sealed secret does not open with another key', () => {
    const sealed = seal(newSecret(), keys, owner);
    expect(() => open(sealed, { current: 'another key, wrong one' }, owner)).toThrow(/neither WEBHOOK_SECRETS_KEY nor/);
  });

  test('after a rotation, secrets sealed with the previous key still open', () => {
    const secret = newSecret();
    const sealed = seal(secret, keys, owner);
    expect(open(sealed, { current: 'the new key, rotated in', previous: [keys.current] }, owner)).toBe(secret);
  });

  test('values stored by earlier versions, unsealed or sealed without an owner, still open', () => {
    expect(open('plain:whsec_x', keys, owner)).toBe('whsec_x');
    const legacy = legacySeal('whsec_y', keys.current);
    expect(open(legacy, keys, owner)).toBe('whsec_y');
  });
});

/** How the first version sealed: AES-256-GCM under SHA-256 of the key material, no associated data. */
function legacySeal(secret: string, material: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(material).digest(), iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return 'aes256gcm:' + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

describe('outbound rules', () => {
  test.each([
    '10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', 'not-an-ip',
    '::7f00:1', '::10.0.0.1', '2002:a00:1::1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '100::1',
  ])('%s is internal', (a) => expect(isInternalAddress(a)).toBe(true));

  test.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1'])('%s is public', (a) => expect(isInternalAddress(a)).toBe(false));

  test('a URL must be https, without credentials or fragment, unless its host is allowed (then http too)', () => {
    const none = allowedHostSet('');
    const loopback = allowedHostSet(' localhost, 127.0.0.1 ,[::1]');
    expect(urlRefusal('https://hooks.example.com/x', none)).toBeUndefined();
    expect(urlRefusal('http://hooks.example.com/x', none)).toMatch(/https/);
    expect(urlRefusal('http://127.0.0.1:9/x', none)).toMatch(/https/);
    expect(urlRefusal('http://127.0.0.1:9/x', loopback)).toBeUndefined();
    expect(urlRefusal('http://[::1]:9/x', loopback)).toBeUndefined();
    expect(urlRefusal('https://u:p@hooks.example.com/', none)).toMatch(/credentials/);
    expect(urlRefusal('ftp://hooks.example.com/', none)).toMatch(/https/);
    expect(urlRefusal('nonsense', none)).toBe('not a URL');
  });

  test('a URL must name a web port unless its host is allowed', () => {
    const none = allowedHostSet('');
    for (const port of ['', ':443', ':8443', ':80', ':8080']) expect(urlRefusal(`https://hooks.example.com${port}/x`, none)).toBeUndefined();
    for (const port of [':22', ':25', ':6379', ':9000']) expect(urlRefusal(`https://hooks.example.com${port}/x`, none)).toMatch(/web port/);
    expect(urlRefusal('http://127.0.0.1:9/x', allowedHostSet('127.0.0.1'))).toBeUndefined();
  });

  test('every resolved address must be public unless the host is allowed', () => {
    const none = allowedHostSet('');
    const pub = { address: '93.184.216.34', family: 4 };
    const priv = { address: '10.0.0.5', family: 4 };
    expect(pickAddress('h', [pub], none)).toEqual({ ok: true, address: pub });
    const refused = pickAddress('h', [pub, priv], none);
    expect(refused).toMatchObject({ ok: false, refusal: 'h resolves to an address this service does not call' });
    // Which internal address a name resolves to is not told: that would map the platform's network.
    expect(JSON.stringify(refused)).not.toContain('10.0.0.5');
    expect(pickAddress('h', [], none)).toMatchObject({ ok: false });
    expect(pickAddress('h', [priv], allowedHostSet('h'))).toEqual({ ok: true, address: priv });
  });

  test('retries back off exponentially with jitter, capped', () => {
    const s = defaultRetrySchedule;
    expect(retryDelayMs(1, s, 0)).toBe(2_500);
    expect(retryDelayMs(1, s, 0.999999)).toBe(5_000);
    expect(retryDelayMs(3, s, 0)).toBe(10_000);
    expect(retryDelayMs(40, s, 0)).toBe(1_800_000);
    expect(retryDelayMs(40, s, 0.999999)).toBeGreaterThan(3_599_990);
    expect(retryDelayMs(40, s, 0.999999)).toBeLessThanOrEqual(3_600_000);
  });
});
