import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { flowRowJson, parseFlow } from '../../core/flow';
import { recordEventId } from '../../core/ids';
import { createLogger } from '../../observability/logger';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { httpInsertStatement } from '../../storage/clickhouse';
import { KeysRepo, type KeyRecord } from '../../storage/keys-repo';
import { migrate, migrations } from '../../storage/migrations';
import { viewFedRollups } from '../../storage/migrations/flow-tables';
import { TelemetryStore } from '../../storage/telemetry-store';
import { generateFlows } from '../support/flows';

/**
 * Production pairs the HTTP client with a current ClickHouse server; none
 * installs here (Debian ships 18.16), and chDB has no HTTP interface. The SQL
 * text of every read and of the schema is built once and sent as is by both
 * adapters; what the HTTP client adds is its insert request: the statement
 * (with the dialect's insert settings) in the URL's `query`, the rows as the
 * body, which ClickHouse's HTTP handler runs as the statement followed by
 * the body. This engine inserts exactly that text on chDB, so the current
 * dialect's inserts, as the HTTP client words them, run on a current engine.
 * What stays untested is the HTTP transport itself against a current server.
 */
class HttpInsertsOnChdb extends ChdbClickHouse {
  readonly statements: string[] = [];

  override async insertJsonEachRow(table: string, ndjson: string | Buffer): Promise<void> {
    const statement = httpInsertStatement(this.database, table, this.dialect);
    this.statements.push(statement);
    await this.exec(`${statement}\n${ndjson.toString()}`);
  }
}

const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };

describe('the HTTP client\'s inserts on the current dialect, run on chDB', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-http-requests-'));
  const ch = new HttpInsertsOnChdb({ dataDir, database: 'http_requests' });
  const db = ch.database;
  beforeAll(async () => {
    await ch.start();
    await migrate(ch, { retention, log: createLogger('silent') });
  });
  afterAll(async () => {
    await ch.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('the engine is of the current generation', () => {
    expect(ch.dialect.generation).toBe('current');
  });

  test('every migration applies and is recorded through the HTTP client\'s insert', async () => {
    const [row] = await ch.query<{ n: string }>(`SELECT count() AS n FROM ${db}.schema_migrations`);
    expect(Number(row!.n)).toBe(migrations.length);
    expect(ch.statements).toContain(`INSERT INTO ${db}.schema_migrations SETTINGS parallel_view_processing = 1 FORMAT JSONEachRow`);
  });

  test('flows inserted as the HTTP client inserts them are counted in every rollup, with the write\'s receipt', async () => {
    const orgId = `org_http_${randomBytes(3).toString('hex')}`;
    const now = Date.now();
    const hex = randomBytes(7).toString('hex');
    const lines = generateFlows(500, 500, 11).batches[0]!.split('\n');
    const rows = lines.map((l, i) => flowRowJson(parseFlow(JSON.parse(l)).data!, { org_id: orgId, event_id: recordEventId(hex, i), ts: now, received_at: now }).json);

    await new TelemetryStore(ch).insert('flows', rows.join('\n') + '\n');

    for (const rollup of viewFedRollups) {
      const [sum] = await ch.query<{ f: string }>(`SELECT sum(flows) AS f FROM ${db}.${rollup.table} WHERE org_id = '${orgId}'`);
      expect({ table: rollup.table, flows: Number(sum!.f) }).toEqual({ table: rollup.table, flows: 500 });
    }
    const [write] = await ch.query<{ w: string }>(`SELECT DISTINCT toString(write_id) AS w FROM ${db}.flows WHERE org_id = '${orgId}'`);
    // Every rollup holds the write's receipt: none lacks it (to be fed again) or holds part of it.
    expect(await new TelemetryStore(ch).completeRollups([write!.w])).toEqual([]);
  });

  test('a record written through the HTTP client\'s insert reads back through its repository', async () => {
    const keys = new KeysRepo(ch);
    const record: KeyRecord = {
      key_id: randomBytes(10).toString('hex'),
      org_id: 'org_http',
      key_hash: randomBytes(32).toString('hex'),
      name: 'written over HTTP',
      role: 'analyst',
      created_at: Date.now(),
      expires_at: 0,
      revoked_at: 0,
      created_by: 'platform-admin',
      version: 1,
      owner_subject: 'service',
      owner_name: '',
      owner_email: '',
    };
    await keys.put(record);
    expect(await keys.get(record.key_id)).toEqual(record);
  });
});
