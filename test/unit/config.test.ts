import { loadConfig } from '../../service/config';
import { decisionSigningKeyOf } from '../../service/decision-signing-key';

describe('configuration', () => {
  test('defaults give the embedded single-machine stack', () => {
    const config = loadConfig({ HOME: '/home/op' });
    expect(config.http.port).toBe(8080);
    expect(config.http.bodyLimitBytes).toBe(10 * 1024 * 1024);
    expect(config.nats.url).toBeUndefined();
    expect(config.clickhouse.url).toBeUndefined();
    expect(config.temporal.address).toBeUndefined();
    expect(config.roles).toEqual(['api', 'stream-workers', 'temporal-worker', 'collector']);
    expect(config.toolsDir).toBe('/home/op/.cache/nettel/bin');
  });

  test('an empty engine address means the embedded engine', () => {
    expect(loadConfig({ NATS_URL: '' }).nats.url).toBeUndefined();
  });

  test('an unknown role is refused with the variable named', () => {
    expect(() => loadConfig({ ROLES: 'api,bogus' })).toThrow(/ROLES/);
  });

  test('JetStream keeps one copy of each stream and bucket unless told otherwise', () => {
    expect(loadConfig({}).nats.replicas).toBe(1);
    expect(loadConfig({ NATS_URL: 'nats://n1:4222', NATS_REPLICAS: '3' }).nats.replicas).toBe(3);
  });

  test('more than one replica on the embedded single-node nats-server is refused with the variable named', () => {
    expect(() => loadConfig({ NATS_REPLICAS: '3' })).toThrow(/NATS_REPLICAS/);
  });

  test('the embedded nats-server bounds its store at 20 GiB unless told otherwise', () => {
    expect(loadConfig({}).nats.embeddedMaxFileStoreBytes).toBe(20 * 1024 ** 3);
    expect(loadConfig({ EMBEDDED_NATS_MAX_FILE_STORE: String(1024 ** 3) }).nats.embeddedMaxFileStoreBytes).toBe(1024 ** 3);
  });

  test('a short admin key is refused', () => {
    expect(() => loadConfig({ ADMIN_API_KEY: 'short' })).toThrow(/ADMIN_API_KEY/);
  });

  test('failed authentication is throttled at 20 a minute per socket address by default', () => {
    expect(loadConfig({}).auth).toEqual({ failuresPerMinute: 20, trustedProxies: [] });
  });

  test('trusted proxies are a comma-separated list of addresses and CIDR ranges', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, ::1' }).auth.trustedProxies).toEqual(['10.0.0.0/8', '::1']);
  });

  test('a trusted proxy that is no address or range is refused with the variable named', () => {
    expect(() => loadConfig({ TRUSTED_PROXIES: 'lb.internal' })).toThrow(/TRUSTED_PROXIES/);
  });
});

describe('the decision signing key', () => {
  const server = { CLICKHOUSE_URL: 'http://clickhouse:8123', WEBHOOK_SECRETS_KEY: 'w'.repeat(32) };

  test('a short DECISION_SIGNING_KEY is refused with the variable named', () => {
    expect(() => loadConfig({ DECISION_SIGNING_KEY: 'short' })).toThrow(/DECISION_SIGNING_KEY/);
  });

  test('the one set is the one used, on either ClickHouse', () => {
    const key = 's'.repeat(32);
    expect(decisionSigningKeyOf(loadConfig({ DECISION_SIGNING_KEY: key }))).toBe(key);
    expect(decisionSigningKeyOf(loadConfig({ ...server, DECISION_SIGNING_KEY: key, ROLES: 'api' }))).toBe(key);
  });

  test.each(['api', 'temporal-worker', 'api,stream-workers,temporal-worker'])(
    'with a ClickHouse server, a %s process without one fails to start with the variable named',
    (roles) => {
      expect(() => decisionSigningKeyOf(loadConfig({ ...server, ROLES: roles, DECISION_SIGNING_KEY: '' }))).toThrow(/DECISION_SIGNING_KEY: required with a ClickHouse server/);
    },
  );

  test('a process that neither signs nor checks decisions needs none', () => {
    expect(decisionSigningKeyOf(loadConfig({ ...server, ROLES: 'stream-workers,collector' }))).toBeUndefined();
  });
});
