import { Registry } from 'prom-client';
import { SessionService, isSessionSecret } from '../../application/identity/session-service';
import { sessionEndsAt, touchIntervalMs } from '../../core/session';
import type { SessionStore, StoredEntry } from '../../streams/session-bucket';

/**
 * Console sessions over a Map standing in for the bucket (compare-and-set on
 * a revision, as JetStream's key-value store does), with a clock the test
 * moves: time-outs, the touch that writes last use only when due, logout, and
 * sign-ins under way. test/integration/console-sessions.test.ts runs them on
 * the real bucket.
 */
const minute = 60_000;
const limits = { idleMs: 30 * minute, maxMs: 12 * 60 * minute };
const person = { subject: 'u-alice', name: 'Alice Martin', email: 'alice@example.org' };

function mapStore() {
  const entries = new Map<string, StoredEntry>();
  let sequence = 0;
  const counts = { writes: 0 };
  const store: SessionStore = {
    read: (key) => Promise.resolve(entries.get(key)),
    create: (key, value) => {
      if (entries.has(key)) return Promise.resolve(false);
      counts.writes += 1;
      entries.set(key, { value: JSON.parse(JSON.stringify(value)) as unknown, revision: ++sequence, writtenAt: Date.now() });
      return Promise.resolve(true);
    },
    update: (key, value, revision) => {
      if (entries.get(key)?.revision !== revision) return Promise.resolve(undefined);
      counts.writes += 1;
      entries.set(key, { value: JSON.parse(JSON.stringify(value)) as unknown, revision: ++sequence, writtenAt: Date.now() });
      return Promise.resolve(sequence);
    },
    removeAt: (key, revision) => {
      if (entries.get(key)?.revision !== revision) return Promise.resolve(false);
      entries.delete(key);
      return Promise.resolve(true);
    },
    remove: (key) => {
      entries.delete(key);
      return Promise.resolve();
    },
  };
  return { store, entries, counts };
}

function sessions() {
  const clock = { now: 1_700_000_000_000 };
  const { store, entries, counts } = mapStore();
  const service = new SessionService({ store, signIns: mapStore().store, limits, registry: new Registry(), now: () => clock.now });
  return { service, clock, entries, counts };
}

const personSubject = { kind: 'person' as const, person, groups: ['noc'], orgId: 'org_a' };

test('a new session id is 256 random bits the bucket never holds as it is', async () => {
  const { service, entries } = sessions();
  const { id } = await service.open(personSubject);
  expect(isSessionSecret(id)).toBe(true);
  expect([...entries.keys()].join()).not.toContain(id);
  expect([...entries.keys()][0]).toMatch(/^s\.[0-9a-f]{64}$/);
});

test('a session is found with its person, groups, workspace and CSRF token', async () => {
  const { service } = sessions();
  const { id, record } = await service.open(personSubject);
  const found = await service.find(id);
  expect(found?.record).toEqual(record);
  expect(found?.record).toMatchObject({ kind: 'person', person, groups: ['noc'], org_id: 'org_a' });
  expect(record.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
});

test('a session unused for the idle time-out ends, and is removed', async () => {
  const { service, clock, entries } = sessions();
  const { id } = await service.open(personSubject);
  clock.now += limits.idleMs;
  expect(await service.find(id)).toBeUndefined();
  expect(entries.size).toBe(0);
});

test('a session in use ends at its absolute time-out all the same', async () => {
  const { service, clock } = sessions();
  const { id } = await service.open(personSubject);
  for (let t = 0; t < limits.maxMs - 10 * minute; t += 10 * minute) {
    clock.now += 10 * minute;
    expect(await service.find(id)).toBeDefined();
  }
  clock.now += 10 * minute;
  expect(await service.find(id)).toBeUndefined();
});

test('requests within the touch interval write nothing; the first one after it records the last use', async () => {
  const { service, clock, counts } = sessions();
  const { id } = await service.open(personSubject);
  const opened = counts.writes;
  for (let i = 0; i < 20; i += 1) await service.find(id);
  expect(counts.writes).toBe(opened);
  clock.now += touchIntervalMs(limits);
  const found = await service.find(id);
  expect(counts.writes).toBe(opened + 1);
  expect(found?.record.last_seen_at).toBe(clock.now);
  expect(sessionEndsAt(found!.record, limits)).toBe(clock.now + limits.idleMs);
});

test('a logout ends the session for good: a later touch does not bring it back', async () => {
  const { service, clock } = sessions();
  const { id } = await service.open(personSubject);
  const closed = await service.close(id);
  expect(closed?.kind).toBe('person');
  clock.now += touchIntervalMs(limits);
  expect(await service.find(id)).toBeUndefined();
});

test('an entry that is not a session record (written by something else) is no session, and is removed', async () => {
  const { service, entries } = sessions();
  const { id } = await service.open(personSubject);
  const [key, entry] = [...entries.entries()][0]!;
  entries.set(key, { value: { ...(entry.value as object), kind: 'person', groups: 'admins' }, revision: entry.revision, writtenAt: entry.writtenAt });
  expect(await service.find(id)).toBeUndefined();
  expect(entries.size).toBe(0);
});

test('choosing a workspace is kept in the session', async () => {
  const { service } = sessions();
  const { id } = await service.open({ ...personSubject, orgId: null });
  await service.choose(id, 'org_b');
  expect((await service.find(id))?.record.org_id).toBe('org_b');
});

test('a sign-in under way is taken once: a replayed callback finds nothing', async () => {
  const { service } = sessions();
  const attempt = { state: 's'.repeat(43), nonce: 'n'.repeat(43), code_verifier: 'v'.repeat(43) };
  const loginId = await service.saveLogin(attempt);
  expect(await service.takeLogin(loginId)).toMatchObject(attempt);
  expect(await service.takeLogin(loginId)).toBeUndefined();
});

test('a sign-in under way for more than ten minutes is refused', async () => {
  const { service, clock } = sessions();
  const loginId = await service.saveLogin({ state: 's'.repeat(43), nonce: 'n'.repeat(43), code_verifier: 'v'.repeat(43) });
  clock.now += 10 * minute + 1;
  expect(await service.takeLogin(loginId)).toBeUndefined();
});
