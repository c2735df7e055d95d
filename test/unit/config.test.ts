import { loadConfig } from '../../service/config';

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

  test('a short admin key is refused', () => {
    expect(() => loadConfig({ ADMIN_API_KEY: 'short' })).toThrow(/ADMIN_API_KEY/);
  });
});
