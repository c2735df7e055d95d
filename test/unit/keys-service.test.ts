import { Registry } from 'prom-client';
import type { AuditEntry } from '../../core/audit-chain';
import type { AuditEvent } from '../../application/audit-ledger';
import { KeysService, ownerForMint, type KeyStore } from '../../application/keys-service';
import { platformAdmin } from '../../core/principal';
import { ownerOfKey, type KeyRecord } from '../../storage/keys-repo';

/**
 * The key service over a plain-object key store and audit, with a clock the
 * test moves: the cache, revocation, stale-if-error and expiry rules without
 * ClickHouse or the wall clock.
 */
const second = 1_000;
const minute = 60 * second;

function fakeStore() {
  const records = new Map<string, KeyRecord>();
  const state = { gets: 0, down: false };
  const outage = new Error('connect ECONNREFUSED 127.0.0.1:8123');
  const store: KeyStore = {
    put: (record) => {
      records.set(record.key_id, record);
      return Promise.resolve();
    },
    get: (keyId) => {
      state.gets += 1;
      return state.down ? Promise.reject(outage) : Promise.resolve(records.get(keyId));
    },
    list: () => Promise.resolve([...records.values()]),
  };
  return { store, state, outage };
}

function keysService(opts: { newKeyHex?: () => string } = {}) {
  const clock = { now: 1_700_000_000_000 };
  const { store, state, outage } = fakeStore();
  const events: AuditEvent[] = [];
  const audit = {
    append: (event: AuditEvent) => {
      events.push(event);
      return Promise.resolve({} as AuditEntry);
    },
  };
  const registry = new Registry();
  const service = new KeysService({ repo: store, audit, registry, adminApiKey: 'nta_admin_secret', now: () => clock.now, ...opts });
  const admin = { kind: 'platform_admin', keyId: 'platform-admin', person: null } as const;
  const failures = async (reason: string) =>
    (await registry.getSingleMetric('nettel_auth_failures_total')!.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  return { service, clock, state, outage, events, admin, failures };
}

const bearer = (key: string) => `Bearer ${key}`;
const unauthorized = { code: 'UNAUTHORIZED', status: 401 };

describe('key service', () => {
  test('a minted key authenticates as a key of its workspace with its role', async () => {
    const { service, admin } = keysService();
    const { key, record } = await service.mint(admin, { orgId: 'org_a', role: 'analyst' });
    await expect(service.authenticate(bearer(key))).resolves.toEqual({ kind: 'workspace', keyId: record.key_id, orgId: 'org_a', roles: ['analyst'], person: null, via: 'api_key' });
  });

  test('a lookup within 5 s of the last is served from the cache', async () => {
    const { service, admin, clock, state } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    await service.authenticate(bearer(key));
    clock.now += 5 * second - 1;
    await service.authenticate(bearer(key));
    expect(state.gets).toBe(1);
  });

  test('a lookup 5 s after the last reads the store again', async () => {
    const { service, admin, clock, state } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    await service.authenticate(bearer(key));
    clock.now += 5 * second;
    await service.authenticate(bearer(key));
    expect(state.gets).toBe(2);
  });

  test('a key revoked in this process is refused at once, though it was cached a moment before', async () => {
    const { service, admin, failures } = keysService();
    const { key, record } = await service.mint(admin, { orgId: 'org_a' });
    await service.authenticate(bearer(key));
    await service.revoke(admin, record.key_id);
    await expect(service.authenticate(bearer(key))).rejects.toMatchObject(unauthorized);
    expect(await failures('revoked')).toBe(1);
  });

  test('a key seen recently stays valid through a store outage for the stale-if-error window', async () => {
    const { service, admin, clock, state } = keysService();
    const { key, record } = await service.mint(admin, { orgId: 'org_a' });
    await service.authenticate(bearer(key));
    state.down = true;
    clock.now += 15 * minute - 1;
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ keyId: record.key_id, orgId: 'org_a' });
  });

  test('a key seen longer ago than the stale-if-error window fails with the store error during an outage', async () => {
    const { service, admin, clock, state, outage } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    await service.authenticate(bearer(key));
    state.down = true;
    clock.now += 15 * minute;
    await expect(service.authenticate(bearer(key))).rejects.toBe(outage);
  });

  test('a key not seen before fails with the store error during an outage', async () => {
    const { service, admin, state, outage } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    state.down = true;
    await expect(service.authenticate(bearer(key))).rejects.toBe(outage);
  });

  test('a key is valid until its expiry time by the injected clock and refused from then on', async () => {
    const { service, admin, clock, failures } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a', expiresInSeconds: 60 });
    clock.now += minute - 1;
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ orgId: 'org_a' });
    clock.now += 1;
    await expect(service.authenticate(bearer(key))).rejects.toMatchObject(unauthorized);
    expect(await failures('expired')).toBe(1);
  });

  test('a well-formed key with another secret is refused as invalid', async () => {
    const { service, admin, failures } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    const forged = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(service.authenticate(bearer(forged))).rejects.toMatchObject(unauthorized);
    expect(await failures('invalid')).toBe(1);
  });

  test('the platform admin key authenticates without a store lookup', async () => {
    const { service, state } = keysService();
    await expect(service.authenticate(bearer('nta_admin_secret'))).resolves.toEqual({ kind: 'platform_admin', keyId: 'platform-admin', person: null });
    expect(state.gets).toBe(0);
  });

  test('minting and revoking a key each append an audit event naming the key', async () => {
    const { service, admin, events } = keysService();
    const { record } = await service.mint(admin, { orgId: 'org_a', name: 'exporter' });
    await service.revoke(admin, record.key_id);
    expect(events).toEqual([
      expect.objectContaining({ orgId: 'org_a', actor: 'platform-admin', action: 'api_key.create', target: record.key_id }),
      expect.objectContaining({ orgId: 'org_a', actor: 'platform-admin', action: 'api_key.revoke', target: record.key_id }),
    ]);
  });
});

describe('key service negative cache', () => {
  const neverMinted = `Bearer ntk_${'0'.repeat(20)}_${'A'.repeat(43)}`;

  test('an unknown key id is looked up in the store once, however often it is tried within five seconds', async () => {
    const { service, state, clock } = keysService();
    for (let i = 0; i < 10; i += 1) {
      await expect(service.authenticate(neverMinted)).rejects.toMatchObject(unauthorized);
      clock.now += second / 2;
    }
    expect(state.gets).toBe(1);
  });

  test('an unknown key id is looked up again five seconds after its miss', async () => {
    const { service, state, clock } = keysService();
    await expect(service.authenticate(neverMinted)).rejects.toMatchObject(unauthorized);
    clock.now += 5 * second;
    await expect(service.authenticate(neverMinted)).rejects.toMatchObject(unauthorized);
    expect(state.gets).toBe(2);
  });

  test('a key minted here under an id that was missed before authenticates at once', async () => {
    const { service, admin } = keysService({ newKeyHex: () => '0'.repeat(20) });
    await expect(service.authenticate(neverMinted)).rejects.toMatchObject(unauthorized);
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ orgId: 'org_a' });
  });

  test('a store outage is not remembered as a miss', async () => {
    const { service, admin, state } = keysService();
    const { key } = await service.mint(admin, { orgId: 'org_a' });
    state.down = true;
    await expect(service.authenticate(bearer(key))).rejects.toThrow('ECONNREFUSED');
    state.down = false;
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ orgId: 'org_a' });
  });
});

describe('key owners', () => {
  const alice = { subject: 'alice', name: 'Alice', email: 'alice@example.net' };
  const asAlice = { kind: 'workspace', keyId: 'key_alice', orgId: 'org_a', roles: ['admin'], person: alice, via: 'api_key' } as const;
  const asService = { ...asAlice, keyId: 'key_exporter', person: null };

  test('a key minted by a person without an owner is owned by that person', async () => {
    const { service } = keysService();
    const { key, record } = await service.mint(asAlice, { role: 'approver' });
    expect(ownerOfKey(record)).toEqual(alice);
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ person: alice, roles: ['approver'] });
  });

  test('a person may mint a service key, which stands for nobody', async () => {
    const { service } = keysService();
    const { key, record } = await service.mint(asAlice, { role: 'ingest', owner: 'service' });
    expect(ownerOfKey(record)).toBe('service');
    await expect(service.authenticate(bearer(key))).resolves.toMatchObject({ person: null });
  });

  test('a person may not mint a key owned by another person', async () => {
    const { service } = keysService();
    await expect(service.mint(asAlice, { role: 'approver', owner: { subject: 'bob' } })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
  });

  test('the platform admin mints a service key unless it names the owner', async () => {
    const { service, admin } = keysService();
    expect(ownerOfKey((await service.mint(admin, { orgId: 'org_a' })).record)).toBe('service');
    expect(ownerOfKey((await service.mint(admin, { orgId: 'org_a', owner: { subject: 'bob', name: 'Bob' } })).record)).toEqual({ subject: 'bob', name: 'Bob', email: '' });
  });

  test('a service key mints service keys only: naming a person is 403, for it stands for nobody', async () => {
    const { service } = keysService();
    expect(ownerOfKey((await service.mint(asService, {})).record)).toBe('service');
    await expect(service.mint(asService, { role: 'approver', owner: { subject: 'ghost' } })).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });

  test('where keys of persons come from sign-ins only, a session mints its person a key, while the platform admin and a person key name nobody', () => {
    const asSession = { ...asAlice, keyId: 'session:abc', via: 'session' } as const;
    expect(ownerForMint(asSession, undefined, true)).toEqual(alice);
    expect(ownerForMint(asAlice, 'service', true)).toBe('service');
    const refusal = (mint: () => unknown) => {
      try {
        mint();
      } catch (err) {
        return (err as { code?: string }).code;
      }
      return undefined;
    };
    expect(refusal(() => ownerForMint(asAlice, undefined, true))).toBe('FORBIDDEN');
    expect(refusal(() => ownerForMint(platformAdmin, { subject: 'alice' }, true))).toBe('FORBIDDEN');
  });

  test('a key stored before keys had owners is a person of its own, named as the key', () => {
    const legacy = { key_id: 'key_old', name: 'grafana', owner_subject: '', owner_name: '', owner_email: '' } as KeyRecord;
    expect(ownerOfKey(legacy)).toEqual({ subject: 'key:key_old', name: 'grafana', email: '' });
  });

  test('minting a key audits its owner', async () => {
    const { service, events } = keysService();
    await service.mint(asAlice, { role: 'approver' });
    expect(events[0]?.details).toMatchObject({ owner: alice });
  });
});
