import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { hasJsonLinesShape } from '../core/json-lines';
import { ClickHouseError, UnsafeInsertError, wrap, type ClickHouse } from './clickhouse';
import { dialectOf, insertSettingsClause, type Dialect } from './dialect';
import { str } from './sql';
import { removeStaleSpoolFiles, spoolFilePrefix, spoolThresholdBytes, writeSpoolFile } from './spool';
import { histogram, type Registry } from '../observability/metrics';
import { defaultStatementQueueConfig, StatementQueue, type StatementClass, type StatementObserver } from './statement-queue';

function parseJsonEachRow<T>(text: string): T[] {
  const rows: T[] = [];
  for (const line of text.split('\n')) if (line) rows.push(JSON.parse(line) as T);
  return rows;
}

export interface ChdbConfig {
  dataDir: string;
  database: string;
  /**
   * A folder (best in memory: /dev/shm) where a large insert is spooled and
   * read back by the engine with INSERT … FROM INFILE. chDB's in-memory insert
   * parses on one thread; from a file the engine parses in parallel, about
   * twice as fast. Unset: every insert goes through memory.
   */
  spoolDir?: string;
  /** Where the session's statement times are counted: its busy share is their sum's rate. */
  registry?: Registry;
}

type ChdbSession = import('chdb').Session;

/** Inserts of at least this many bytes are bulk (flows): reads and small writes go before them (see StatementQueue). */
const bulkInsertBytes = 64 * 1024;
const insertClass = (bytes: number): StatementClass => (bytes >= bulkInsertBytes ? 'bulk' : 'interactive');

/**
 * chDB shares its process with the API: its caches are sized for that, not
 * for a dedicated server that takes half the machine's memory for each.
 */
const chdbServerSettings = [
  `--mark_cache_size=${256 * 1024 ** 2}`,
  `--primary_index_cache_size=${256 * 1024 ** 2}`,
  `--index_mark_cache_size=${64 * 1024 ** 2}`,
  `--compiled_expression_cache_size=${32 * 1024 ** 2}`,
];

/**
 * The one session runs one statement at a time, so its saturation is the
 * rate of the statements' summed run time (1: never idle), and what a
 * caller waits is the wait before its turn plus the run.
 */
function sessionTimes(registry: Registry): StatementObserver {
  const buckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  const ran = histogram(registry, { name: 'nettel_chdb_statement_seconds', help: 'Time each statement held the one chDB session, by class (interactive: reads and small writes; bulk: inserts of flows)', labelNames: ['class'] as const, buckets });
  const waited = histogram(registry, { name: 'nettel_chdb_statement_wait_seconds', help: 'Time each statement waited for its turn on the one chDB session, by class', labelNames: ['class'] as const, buckets });
  return (kind, waitedMs, ranMs) => {
    ran.observe({ class: kind }, ranMs / 1000);
    waited.observe({ class: kind }, waitedMs / 1000);
  };
}

/** ClickHouse in this process: chDB binds one data folder per process. */
export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  private session?: ChdbSession;
  private serverDialect?: Dialect;
  private readonly statementOrder: StatementQueue;

  constructor(private readonly config: ChdbConfig) {
    this.statementOrder = new StatementQueue(defaultStatementQueueConfig, config.registry ? sessionTimes(config.registry) : undefined);
  }

  get database(): string {
    return this.config.database;
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.config.dataDir, { recursive: true });
    // Loaded lazily: the native library is only mapped by processes that use chDB.
    const { Session } = await import('chdb');
    this.session = new Session(path.resolve(this.config.dataDir), { connectionArgs: chdbServerSettings });
    try {
      await this.exec(`CREATE DATABASE IF NOT EXISTS ${this.database}`);
      this.serverDialect = dialectOf(await this.version());
      if (this.config.spoolDir) await removeStaleSpoolFiles(this.config.spoolDir);
    } catch (err) {
      // A start that fails is not in the lifecycle's started list, so nobody else would release the folder.
      await this.stop();
      throw err;
    }
  }

  get dialect(): Dialect {
    if (!this.serverDialect) throw new ClickHouseError('chdb session is not started', undefined);
    return this.serverDialect;
  }

  /**
   * Resolves once the engine has let go of the data folder. chDB's close()
   * defers the connection's teardown while an operation still runs on it (a
   * query whose caller timed out keeps computing), and until then the process
   * cannot open another folder: a restart, or the next test file in a shared
   * worker, would be refused with "only one active data directory".
   */
  async stop(): Promise<void> {
    if (!this.session) return;
    this.session.close();
    this.session = undefined;
    const { drainPending } = await import('chdb');
    await drainPending();
  }

  private get open(): ChdbSession {
    if (!this.session) throw new ClickHouseError('chdb session is not started', undefined);
    return this.session;
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.statementOrder.run('interactive', () => this.open.queryAsync(sql, { format: 'TabSeparated' }));
    } catch (err) {
      throw wrap('clickhouse statement failed', err);
    }
  }

  async query<T>(sql: string): Promise<T[]> {
    try {
      const result = await this.statementOrder.run('interactive', () => this.open.queryAsync(sql, { format: 'JSONEachRow' }));
      return parseJsonEachRow<T>(result.text());
    } catch (err) {
      throw wrap('clickhouse query failed', err);
    }
  }

  async insertJsonEachRow(table: string, ndjson: string | Buffer): Promise<void> {
    const spoolDir = this.config.spoolDir;
    if (spoolDir && Buffer.byteLength(ndjson) >= spoolThresholdBytes) return this.insertFromFile(spoolDir, table, ndjson);
    return this.insertInMemory(table, ndjson);
  }

  /**
   * chDB's in-memory insert hands the rows to the engine as the text of the
   * query, and runs whatever follows a blank line as another statement
   * (chdb 3.4.0: `{"x":1}\n\nINSERT INTO secrets …` stores a row in
   * `secrets`). Only rows in the JSONEachRow shape, which has no blank line,
   * go that way; anything else is refused before the engine sees it.
   */
  private async insertInMemory(table: string, ndjson: string | Buffer): Promise<void> {
    const rows = typeof ndjson === 'string' ? Buffer.from(ndjson) : ndjson;
    if (!hasJsonLinesShape(rows)) throw new UnsafeInsertError(table);
    try {
      const target = `${this.database}.${table}`;
      const settings = this.dialect.insertSettings;
      await this.statementOrder.run(insertClass(rows.length), () => this.open.insert({ table: target, values: rows, format: 'JSONEachRow', settings }));
    } catch (err) {
      throw wrap(`clickhouse insert into ${table} failed`, err);
    }
  }

  async version(): Promise<string> {
    const rows = await this.query<{ v: string }>('SELECT version() AS v');
    return rows[0]?.v ?? 'unknown';
  }

  /** The same rows, written to a file of this process's own and read by the engine: the file is removed whatever happens. */
  private async insertFromFile(spoolDir: string, table: string, ndjson: string | Buffer): Promise<void> {
    const file = path.join(spoolDir, `${spoolFilePrefix}${process.pid}-${randomUUID()}.jsonl`);
    try {
      await writeSpoolFile(file, typeof ndjson === 'string' ? Buffer.from(ndjson) : ndjson);
    } catch {
      // The spool folder is full or gone (a small /dev/shm): the same rows go through memory instead.
      await fs.promises.rm(file, { force: true });
      return this.insertInMemory(table, ndjson);
    }
    try {
      const statement = `INSERT INTO ${this.database}.${table} FROM INFILE ${str(file)}${insertSettingsClause(this.dialect)} FORMAT JSONEachRow`;
      await this.statementOrder.run('bulk', () => this.open.queryAsync(statement, { format: 'TabSeparated' }));
    } catch (err) {
      throw wrap(`clickhouse insert into ${table} failed`, err);
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }
}
