import { ClickHouseLogLevel, createClient, drainStream, type ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import fs from 'node:fs';
import { dialectOf, insertSettingsClause, type Dialect } from './dialect';

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
  /** Inserts JSONEachRow text (one object per line) into a table; a server runs it under `queryId` when given. */
  insertJsonEachRow(table: string, ndjson: string | Buffer, opts?: InsertOptions): Promise<void>;
  version(): Promise<string>;
  /**
   * In-process engines only (chDB): resolves once every insert of flows
   * running or waiting when it was called has ended. A server's inserts are
   * found in system.processes instead.
   */
  insertsSettled?(): Promise<void>;
  /** The server generation's dialect, known once started. */
  readonly dialect: Dialect;
}

export interface InsertOptions {
  /** The query id a server runs the insert under (system.processes shows it while it runs). */
  queryId?: string;
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

/** An engine error as a ClickHouseError with its numeric code, with context. */
export function wrap(context: string, err: unknown): ClickHouseError {
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

/**
 * The statement HttpClickHouse sends to insert rows: it travels in the URL's
 * `query` parameter, the rows as the body, and ClickHouse's HTTP handler runs
 * the statement followed by the body. The dialect's insert settings are part
 * of the statement, so the request is all in this text and the body. Built
 * apart from the transport: no current ClickHouse server installs here, so
 * the tests run this statement for the current dialect on chDB, the way the
 * HTTP handler would (test/integration/storage-http-requests.test.ts).
 */
export function httpInsertStatement(database: string, table: string, dialect: Dialect): string {
  return `INSERT INTO ${database}.${table}${insertSettingsClause(dialect)} FORMAT JSONEachRow`;
}

/** TLS to the server (an https:// URL): the CA that signed its certificate, and for mutual TLS a client certificate and key. */
export interface ClickHouseTls {
  caFile: string;
  certFile?: string;
  keyFile?: string;
}

export interface HttpClickHouseConfig {
  url: string;
  user: string;
  password: string;
  database: string;
  tls?: ClickHouseTls;
}

/** @clickhouse/client's `tls` option, read from the files. */
function tlsOptionOf(tls: ClickHouseTls | undefined) {
  if (!tls) return {};
  const ca_cert = fs.readFileSync(tls.caFile);
  if (!tls.certFile || !tls.keyFile) return { tls: { ca_cert } };
  return { tls: { ca_cert, cert: fs.readFileSync(tls.certFile), key: fs.readFileSync(tls.keyFile) } };
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
      ...tlsOptionOf(this.config.tls),
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

  async insertJsonEachRow(table: string, ndjson: string | Buffer, opts: InsertOptions = {}): Promise<void> {
    try {
      const result = await this.open.exec({
        query: httpInsertStatement(this.database, table, this.dialect),
        query_id: opts.queryId,
        values: Readable.from([typeof ndjson === 'string' ? Buffer.from(ndjson) : ndjson]),
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
