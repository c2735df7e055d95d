import { startTestStack, transports, type TestStack, type Transport } from '../support/test-stack';

/**
 * Each ClickHouse generation gets the schema written for it (see
 * storage/dialect.ts): current ClickHouse (chDB) its own types, codecs and
 * TTL; clickhouse-server 18.16 epoch milliseconds and Strings, retention by
 * partitions. Read from system.columns and system.tables.
 */
const rollups = ['flows_1m', 'flows_5m', 'flows_1h', 'flows_src_1m', 'flows_src_5m', 'flows_src_1h'];
const dimensionRollups = ['flows_dims_1h'];

const expected = {
  chdb: {
    generation: 'current',
    flows: { org_id: 'LowCardinality(String)', ts: 'DateTime64(3)', received_at: 'DateTime64(3)', src_ip: 'IPv6', dst_ip: 'IPv6', protocol: 'LowCardinality(String)' },
    bucket: 'DateTime',
    address: 'IPv6',
  },
  'clickhouse-server': {
    generation: 'legacy',
    flows: { org_id: 'String', ts: 'Int64', received_at: 'Int64', src_ip: 'String', dst_ip: 'String', protocol: 'String' },
    bucket: 'Int64',
    address: 'String',
  },
} as const satisfies Record<Transport, unknown>;

describe.each(transports)('storage schema on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const columns = async (table: string) => {
    const ch = t.stack.clickhouse;
    const rows = await ch.query<{ name: string; type: string }>(
      `SELECT name, type FROM system.columns WHERE database = '${ch.database}' AND table = '${table}'`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.type]));
  };

  const tableDefinitions = async () => {
    const ch = t.stack.clickhouse;
    const rows = await ch.query<{ name: string; create_table_query: string }>(
      `SELECT name, create_table_query FROM system.tables WHERE database = '${ch.database}' AND name IN ('flows', ${[...rollups, ...dimensionRollups].map((r) => `'${r}'`).join(', ')})`,
    );
    return new Map(rows.map((r) => [r.name, r.create_table_query]));
  };

  test('the dialect is the one of the server generation', () => {
    expect(t.stack.clickhouse.dialect.generation).toBe(expected[transport].generation);
  });

  test('flow columns take the generation\'s types', async () => {
    expect(await columns('flows')).toMatchObject({ ...expected[transport].flows, event_id: 'String', bytes: 'UInt64', packets: 'UInt64' });
  });

  test('every rollup keys its buckets and addresses with the generation\'s types', async () => {
    const types = Object.fromEntries(await Promise.all(rollups.map(async (r) => [r, await columns(r)] as const)));
    const { bucket, address } = expected[transport];
    const want = (r: string) => ({ minute: bucket, ...(r.startsWith('flows_src_') ? { src_ip: address } : { dst_ip: address }) });
    expect(types).toMatchObject(Object.fromEntries(rollups.map((r) => [r, want(r)])));
  });

  test('every dimension rollup keys its buckets, exporter, interfaces, AS numbers and labels with the flows\' types, and keeps no address', async () => {
    const { bucket, address } = expected[transport];
    const label = expected[transport].flows.protocol;
    const want = {
      minute: bucket, exporter: address, in_if: 'UInt32', out_if: 'UInt32', protocol: label, src_as: 'UInt32', dst_as: 'UInt32',
      src_country: label, dst_country: label, src_net_name: label, dst_net_name: label, write_id: 'UInt64', bytes: 'UInt64', packets: 'UInt64', flows: 'UInt64',
    };
    const types = Object.fromEntries(await Promise.all(dimensionRollups.map(async (r) => [r, await columns(r)] as const)));
    expect(types).toEqual(Object.fromEntries(dimensionRollups.map((r) => [r, { org_id: expected[transport].flows.org_id, ...want }])));
  });

  test('flows and every rollup expire by TTL on current ClickHouse, and have no TTL on 18.16', async () => {
    const hasTtl = Object.fromEntries([...(await tableDefinitions())].map(([name, ddl]) => [name, / TTL /.test(ddl)]));
    expect(hasTtl).toEqual(Object.fromEntries(['flows', ...rollups, ...dimensionRollups].map((name) => [name, transport === 'chdb'])));
  });

  test('flow columns are compressed with codecs on current ClickHouse only', async () => {
    const flows = (await tableDefinitions()).get('flows');
    if (transport === 'chdb') expect(flows).toMatch(/`ts` DateTime64\(3\) CODEC\(Delta\(8\), ZSTD\(1\)\)|`ts` DateTime64\(3\) CODEC\(Delta, ZSTD\(1\)\)/);
    else expect(flows).not.toMatch(/CODEC/);
  });
});
