import { ClickHouseLogLevel, createClient, drainStream, type ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { hasJsonLinesShape } from '../core/json-lines';
import { str } from './sql';
import { removeStaleSpoolFiles, spoolFilePrefix, spoolThresholdBytes } from './spool';
import { dialectOf, type Dialect } from './dialect';

/**
 * One narrow interface over both ClickHouse transports: chDB in-process (the
 * default on one machine) and a ClickHouse server over HTTP. Schema and
 * queries are the same on both; rows travel as JSONEachRow.
 */
export interface ClickHouse {
  readonly transport: 'chdb' | 'http';
  readonly database: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Runs a statement that returns nothing (DDL, ALTER, OPTIMIZE). */
  exec(sql: string): Promise<void>;
  /** Runs a SELECT and returns its rows; 64-bit integers come back as strings. */
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** Inserts JSONEachRow text (one object per line) into a table. */
  insertJsonEachRow(table: string, ndjson: string | Buffer): Promise<void>;
  version(): Promise<string>;
  /** The server generation's dialect, known once started. */
  readonly dialect: Dialect;
}

/** An error from ClickHouse, with its numeric code when the server gave one. */
export class ClickHouseError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClickHouseError';
  }
}

/** Rows refused before they reach the engine: not one JSON object per line (see ChdbClickHouse's in-memory insert). */
export class UnsafeInsertError extends ClickHouseError {
  constructor(table: string) {
    super(`refusing to insert into ${table}: the rows are not one JSON object per line`, undefined);
    this.name = 'UnsafeInsertError';
  }
}

function wrap(context: string, err: unknown): ClickHouseError {
  if (err instanceof ClickHouseError) return err;
  const e = err as { message?: string; code?: unknown; clickhouseCode?: unknown };
  const message = String(e?.message ?? err);
  let code: number | undefined;
  if (typeof e?.clickhouseCode === 'number') code = e.clickhouseCode;
  else if (typeof e?.code === 'string' && /^\d+$/.test(e.code)) code = Number(e.code);
  else {
    // Old servers (18.16) answer "Code: 60, e.displayText() = ..." that the client does not parse.
    const m = /Code: (\d+)/.exec(message);
    if (m) code = Number(m[1]);
  }
  return new ClickHouseError(`${context}: ${message.split('\n')[0]}`, code, { cause: err });
}

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
}

type ChdbSession = import('chdb').Session;

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

/** ClickHouse in this process: chDB binds one data folder per process. */
export class ChdbClickHouse implements ClickHouse {
  readonly transport = 'chdb' as const;
  private session?: ChdbSession;
  private serverDialect?: Dialect;

  constructor(private readonly config: ChdbConfig) {}

  get database(): string {
    return this.config.database;
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.config.dataDir, { recursive: true });
    // Loaded lazily: the native library is only mapped by processes that use chDB.
    const { Session } = await import('chdb');
    this.session = new Session(path.resolve(this.config.dataDir), { connectionArgs: chdbServerSettings });
    await this.exec(`CREATE DATABASE IF NOT EXISTS ${this.database}`);
    this.serverDialect = dialectOf(await this.version());
    if (this.config.spoolDir) await removeStaleSpoolFiles(this.config.spoolDir);
  }

  get dialect(): Dialect {
    if (!this.serverDialect) throw new ClickHouseError('chdb session is not started', undefined);
    return this.serverDialect;
  }

  stop(): Promise<void> {
    this.session?.close();
    this.session = undefined;
    return Promise.resolve();
  }

  private get open(): ChdbSession {
    if (!this.session) throw new ClickHouseError('chdb session is not started', undefined);
    return this.session;
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.open.queryAsync(sql, { format: 'TabSeparated' });
    } catch (err) {
      throw wrap('clickhouse statement failed', err);
    }
  }

  async query<T>(sql: string): Promise<T[]> {
    try {
      const result = await this.open.queryAsync(sql, { format: 'JSONEachRow' });
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
      await this.open.insert({ table: `${this.database}.${table}`, values: rows, format: 'JSONEachRow', settings: this.dialect.insertSettings });
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
      await fs.promises.writeFile(file, ndjson, { mode: 0o600 });
    } catch {
      // The spool folder is full or gone (a small /dev/shm): the same rows go through memory instead.
      await fs.promises.rm(file, { force: true });
      return this.insertInMemory(table, ndjson);
    }
    try {
      const settings = Object.entries(this.dialect.insertSettings).map(([k, v]) => `${k} = ${v}`).join(', ');
      await this.open.queryAsync(
        `INSERT INTO ${this.database}.${table} FROM INFILE ${str(file)} ${settings ? `SETTINGS ${settings}` : ''} FORMAT JSONEachRow`,
        { format: 'TabSeparated' },
      );
    } catch (err) {
      throw wrap(`clickhouse insert into ${table} failed`, err);
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }
}

export interface HttpClickHouseConfig {
  url: string;
  user: string;
  password: string;
  database: string;
}

/** A ClickHouse server (or cluster behind a load balancer) over HTTP. */
export class HttpClickHouse implements ClickHouse {
  readonly transport = 'http' as const;
  private client?: ClickHouseClient;
  private serverDialect?: Dialect;

  constructor(private readonly config: HttpClickHouseConfig) {}

  get database(): string {
    return this.config.database;
  }

  async start(): Promise<void> {
    const bootstrap = this.createClient('default');
    try {
      await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${this.database}` });
    } catch (err) {
      throw wrap('unable to create database', err);
    } finally {
      await bootstrap.close();
    }
    this.client = this.createClient(this.database);
    this.serverDialect = dialectOf(await this.version());
  }

  get dialect(): Dialect {
    if (!this.serverDialect) throw new ClickHouseError('clickhouse client is not started', undefined);
    return this.serverDialect;
  }

  private createClient(database: string): ClickHouseClient {
    return createClient({
      url: this.config.url,
      username: this.config.user,
      password: this.config.password,
      database,
      request_timeout: 60_000,
      compression: { request: false, response: false },
      max_open_connections: 16,
      // Errors are wrapped and counted by the caller; the client's own logger would print them twice.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async stop(): Promise<void> {
    await this.client?.close();
    this.client = undefined;
  }

  private get open(): ClickHouseClient {
    if (!this.client) throw new ClickHouseError('clickhouse client is not started', undefined);
    return this.client;
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.open.command({ query: sql });
    } catch (err) {
      throw wrap('clickhouse statement failed', err);
    }
  }

  async query<T>(sql: string): Promise<T[]> {
    try {
      const result = await this.open.query({ query: sql, format: 'JSONEachRow' });
      return await result.json<T>();
    } catch (err) {
      throw wrap('clickhouse query failed', err);
    }
  }

  async insertJsonEachRow(table: string, ndjson: string | Buffer): Promise<void> {
    try {
      const result = await this.open.exec({
        query: `INSERT INTO ${this.database}.${table} FORMAT JSONEachRow`,
        values: Readable.from([typeof ndjson === 'string' ? Buffer.from(ndjson) : ndjson]),
        clickhouse_settings: this.dialect.insertSettings,
      });
      // Drain the (empty) response so the socket returns to the pool.
      await drainStream(result.stream);
    } catch (err) {
      throw wrap(`clickhouse insert into ${table} failed`, err);
    }
  }

  async version(): Promise<string> {
    const rows = await this.query<{ v: string }>('SELECT version() AS v');
    return rows[0]?.v ?? 'unknown';
  }
}
