import { z } from 'zod';
import { certificatePair, defineSettings, integer, invalidSetting, optionalAddress, optionalText, setting } from '../core/settings';
import type { ClickHouseTls } from './clickhouse';
import type { Retention } from './migrations/migration';

const retentionDays = (days: number) => integer(1, 3650).default(days);

/** TLS to a ClickHouse server: its CA, and a client certificate for mutual TLS, over an https:// CLICKHOUSE_URL. */
function clickhouseTlsOf(e: { CLICKHOUSE_URL?: string; CLICKHOUSE_TLS_CA_FILE?: string; CLICKHOUSE_TLS_CERT_FILE?: string; CLICKHOUSE_TLS_KEY_FILE?: string }): ClickHouseTls | undefined {
  certificatePair('CLICKHOUSE', e.CLICKHOUSE_TLS_CERT_FILE, e.CLICKHOUSE_TLS_KEY_FILE);
  if (!e.CLICKHOUSE_TLS_CA_FILE) {
    if (e.CLICKHOUSE_TLS_CERT_FILE) throw invalidSetting('CLICKHOUSE_TLS_CERT_FILE: needs CLICKHOUSE_TLS_CA_FILE, the CA of the server');
    return undefined;
  }
  if (!e.CLICKHOUSE_URL?.startsWith('https://')) throw invalidSetting('CLICKHOUSE_TLS_CA_FILE: needs an https:// CLICKHOUSE_URL');
  return { caFile: e.CLICKHOUSE_TLS_CA_FILE, certFile: e.CLICKHOUSE_TLS_CERT_FILE, keyFile: e.CLICKHOUSE_TLS_KEY_FILE };
}

/** Where ClickHouse is (a server, or chDB in-process), how to reach it, and how long each table keeps its rows. */
export const clickhouseSettings = defineSettings(
  'ClickHouse',
  {
    CLICKHOUSE_URL: setting(optionalAddress(), 'ClickHouse HTTP endpoint, e.g. `http://ch-lb:8123`', 'chDB'),
    CLICKHOUSE_USER: setting(z.string().default('default'), 'ClickHouse user'),
    CLICKHOUSE_PASSWORD: setting(z.string().default(''), "ClickHouse user's password"),
    CLICKHOUSE_TLS_CA_FILE: setting(optionalText(), "TLS to a ClickHouse server over `https://`: the server's CA"),
    CLICKHOUSE_TLS_CERT_FILE: setting(optionalText(), 'a client certificate for mutual TLS to ClickHouse, with `CLICKHOUSE_TLS_KEY_FILE`'),
    CLICKHOUSE_TLS_KEY_FILE: setting(optionalText(), "the client certificate's key, for mutual TLS to ClickHouse"),
    CLICKHOUSE_DATABASE: setting(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('nettel'), 'database, created at start'),
    CHDB_SPOOL_DIR: setting(
      optionalText(),
      'where chDB inserts of 4 MiB or more are spooled and read back with `INSERT … FROM INFILE`: chDB parses an in-memory insert on one thread, a file in parallel (about twice as fast)',
      '`/dev/shm` (else the temp folder)',
    ),
    RETENTION_DAYS: setting(retentionDays(30), 'retention of raw telemetry (flows, signals, metric events), in days'),
    RETENTION_1M_DAYS: setting(retentionDays(30), 'retention of the 1-minute rollups, in days'),
    RETENTION_5M_DAYS: setting(retentionDays(90), 'retention of the 5-minute rollups, in days'),
    RETENTION_1H_DAYS: setting(retentionDays(400), 'retention of the hourly rollups, in days'),
  },
  (e) => ({
    clickhouse: {
      url: e.CLICKHOUSE_URL,
      user: e.CLICKHOUSE_USER,
      password: e.CLICKHOUSE_PASSWORD,
      tls: clickhouseTlsOf(e),
      database: e.CLICKHOUSE_DATABASE,
      chdbSpoolDir: e.CHDB_SPOOL_DIR,
      retention: { raw: e.RETENTION_DAYS, minute: e.RETENTION_1M_DAYS, fiveMinutes: e.RETENTION_5M_DAYS, hour: e.RETENTION_1H_DAYS } satisfies Retention,
    },
  }),
);
