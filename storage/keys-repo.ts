import type { Role } from '../core/roles';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

/** A workspace key as stored: the secret itself is never stored, only its SHA-256. */
export interface KeyRecord {
  key_id: string;
  org_id: string;
  key_hash: string;
  name: string;
  role: Role;
  created_at: number;
  /** Epoch ms; 0 means the key never expires. */
  expires_at: number;
  /** Epoch ms; 0 means the key is not revoked. */
  revoked_at: number;
  created_by: string;
  version: number;
}

const columns = 'key_id, org_id, key_hash, name, role, created_at, expires_at, revoked_at, created_by, version';

function fromRow(row: Record<string, unknown>): KeyRecord {
  return {
    key_id: String(row.key_id),
    org_id: String(row.org_id),
    key_hash: String(row.key_hash),
    name: String(row.name),
    role: row.role as Role,
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at),
    revoked_at: Number(row.revoked_at),
    created_by: String(row.created_by),
    version: Number(row.version),
  };
}

export class KeysRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(record: KeyRecord): Promise<void> {
    await this.ch.insertJsonEachRow('api_keys', JSON.stringify(record) + '\n');
  }

  async get(keyId: string): Promise<KeyRecord | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.api_keys FINAL WHERE key_id = ${str(keyId)} LIMIT 1`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Keys newest first; `beforeCreatedAt`/`beforeKeyId` continue a previous page. */
  async list(opts: { orgId?: string; limit: number; after?: { created_at: number; key_id: string } }): Promise<KeyRecord[]> {
    const where: string[] = [];
    if (opts.orgId) where.push(`org_id = ${str(opts.orgId)}`);
    if (opts.after) {
      where.push(
        `(created_at < ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND key_id < ${str(opts.after.key_id)}))`,
      );
    }
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.api_keys FINAL
       ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
       ORDER BY created_at DESC, key_id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }
}
