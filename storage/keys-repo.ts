import type { KeyOwner, Person } from '../core/person';
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
  /** The owner's subject, `service` for a machine key; '' for a key minted before keys had owners (storage/migrations/persons.ts). */
  owner_subject: string;
  owner_name: string;
  owner_email: string;
}

const columns = 'key_id, org_id, key_hash, name, role, created_at, expires_at, revoked_at, created_by, version, owner_subject, owner_name, owner_email';

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
    owner_subject: String(row.owner_subject),
    owner_name: String(row.owner_name),
    owner_email: String(row.owner_email),
  };
}

/**
 * Who owns a key. A key minted before keys had owners is a person of its
 * own, `key:<key_id>` named as the key, as four eyes between keys treated it:
 * its holder re-mints it with an owner (docs/governance.md).
 */
export function ownerOfKey(record: KeyRecord): KeyOwner {
  if (record.owner_subject === serviceOwner) return 'service';
  if (record.owner_subject === '') return { subject: `key:${record.key_id}`, name: record.name, email: '' };
  return { subject: record.owner_subject, name: record.owner_name, email: record.owner_email };
}

/** The person behind a key; null for a service key. */
export function personOfKey(record: KeyRecord): Person | null {
  const owner = ownerOfKey(record);
  return owner === 'service' ? null : owner;
}

/** The owner columns of a key owned by `owner`. */
export function ownerColumns(owner: KeyOwner): Pick<KeyRecord, 'owner_subject' | 'owner_name' | 'owner_email'> {
  return owner === 'service'
    ? { owner_subject: serviceOwner, owner_name: '', owner_email: '' }
    : { owner_subject: owner.subject, owner_name: owner.name, owner_email: owner.email };
}

const serviceOwner = 'service';

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

  /** Whether any key was ever minted for the workspace: a workspace exists from its first key on (keys are revoked, never deleted). */
  async anyOf(orgId: string): Promise<boolean> {
    const rows = await this.ch.query(`SELECT 1 AS found FROM ${this.ch.database}.api_keys WHERE org_id = ${str(orgId)} LIMIT 1`);
    return rows.length > 0;
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
