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

/** Which of the sessions a statement ran on: the writes' one, or one of the reads'. */
type LaneName = 'writes' | 'reads';

/**
 * Each session runs one statement at a time, so a lane's saturation is the
 * rate of its statements' summed run time (1: never idle; the reads' lanes
 * together up to their number), and what a caller waits is the wait before
 * its turn plus the run.
 */
function sessionTimes(registry: Registry, lane: LaneName): StatementObserver {
  const buckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  const labelNames = ['lane', 'class'] as const;
  const ran = histogram(registry, { name: 'nettel_chdb_statement_seconds', help: 'Time each statement held its chDB session, by lane (writes: every insert of flows and large insert; reads: the rest) and class (interactive: reads and small writes; bulk: large inserts)', labelNames, buckets });
  const waited = histogram(registry, { name: 'nettel_chdb_statement_wait_seconds', help: 'Time each statement waited for its turn on its chDB session, by lane and class', labelNames, buckets });
  return (kind, waitedMs, ranMs) => {
    ran.observe({ lane, class: kind }, ranMs / 1000);
    waited.observe({ lane, class: kind }, waitedMs / 1000);
  };
}

/** A chDB session and the statements waiting for it. */
interface Lane {
  session: ChdbSession;
  order: StatementQueue;
}

/**
 * Sessions for the statements that are not inserts of flows: chDB runs the
 * statements of different sessions on one data folder side by side (chdb
 * 3.4.0: each Session is its own connection to the process's one engine),
 * so a read no longer waits behind an insert of flows or a fold.
 */
const readSessions = 2;

/**
 * ClickHouse in this process: chDB binds one data folder per process, and
 * this adapter opens several sessions on it. Every insert into `flows`, and
 * every large insert, goes through the writes' session, one at a time as
 * before (small ones first); every other statement through the reads'
 * session with the fewest statements in hand. Inserts of flows stay in one
 * line so that `insertsSettled()` can tell the rollup fold when every one
 * running or waiting has ended (storage/rollup-fold.ts).
 */
export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  private writes?: Lane;
  private reads: Lane[] = [];
  private serverDialect?: Dialect;
  /** Inserts of flows running or waiting their turn. */
  private readonly flowInserts = new Set<Promise<unknown>>();

  constructor(private readonly config: ChdbConfig) {}

  get database(): string {
    return this.config.database;
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.config.dataDir, { recursive: true });
    try {
      // Loaded lazily: the native library is only mapped by processes that use chDB.
      const { Session } = await import('chdb');
      const lane = (name: LaneName): Lane => ({
        session: new Session(path.resolve(this.config.dataDir), { connectionArgs: chdbServerSettings }),
        order: new StatementQueue(defaultStatementQueueConfig, this.config.registry ? sessionTimes(this.config.registry, name) : undefined),
      });
      this.writes = lane('writes');
      for (let i = 0; i < readSessions; i++) this.reads.push(lane('reads'));
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
    const lanes = [...(this.writes ? [this.writes] : []), ...this.reads];
    if (!lanes.length) return;
    this.writes = undefined;
    this.reads = [];
    for (const l of lanes) l.session.close();
    const { drainPending } = await import('chdb');
    await drainPending();
  }

  /** Resolves once every insert of flows running or waiting now has ended (each, its way). */
  async insertsSettled(): Promise<void> {
    await Promise.allSettled([...this.flowInserts]);
  }

  private get writesLane(): Lane {
    if (!this.writes) throw new ClickHouseError('chdb session is not started', undefined);
    return this.writes;
  }

  /** The reads' session with the fewest statements running or waiting. */
  private get readsLane(): Lane {
    const lane = this.reads.reduce<Lane | undefined>((best, l) => (best && best.order.pending <= l.order.pending ? best : l), undefined);
    if (!lane) throw new ClickHouseError('chdb session is not started', undefined);
    return lane;
  }

  /** Runs `statement` on `lane` in its turn; an insert of flows is followed until it ends. */
  private run<T>(lane: Lane, kind: StatementClass, statement: (session: ChdbSession) => Promise<T>, table?: string): Promise<T> {
    const running = lane.order.run(kind, () => statement(lane.session));
    if (table === 'flows') {
      this.flowInserts.add(running);
      const done = () => void this.flowInserts.delete(running);
      running.then(done, done);
    }
    return running;
  }

  /**
   * A `SET` changes the settings of the session it runs in: it runs in every
   * session, so that the handle's statements keep acting as one session's
   * (a test lowers the memory limit this way and inserts of flows must meet it).
   */
  async exec(sql: string): Promise<void> {
    const lanes = /^\s*SET\s/i.test(sql) ? [this.writesLane, ...this.reads] : [this.readsLane];
    try {
      await Promise.all(lanes.map((lane) => this.run(lane, 'interactive', (session) => session.queryAsync(sql, { format: 'TabSeparated' }))));
    } catch (err) {
      throw wrap('clickhouse statement failed', err);
    }
  }

  async query<T>(sql: string): Promise<T[]> {
    try {
      const result = await this.run(this.readsLane, 'interactive', (session) => session.queryAsync(sql, { format: 'JSONEachRow' }));
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
      const kind = insertClass(rows.length);
      const lane = table === 'flows' || kind === 'bulk' ? this.writesLane : this.readsLane;
      await this.run(lane, kind, (session) => session.insert({ table: target, values: rows, format: 'JSONEachRow', settings }), table);
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
      await this.run(this.writesLane, 'bulk', (session) => session.queryAsync(statement, { format: 'TabSeparated' }), table);
    } catch (err) {
      throw wrap(`clickhouse insert into ${table} failed`, err);
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }
}
