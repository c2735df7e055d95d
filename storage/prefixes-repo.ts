import { prefixRange, prefixStatusOf, type PrefixStatus, type WorkspacePrefix } from '../core/workspace-prefix';
import type { ClickHouse } from './clickhouse';
import { int, str, strList } from './sql';

const columns = 'org_id, id, prefix, description, status, created_at, created_by, updated_at, version';

function fromRow(r: Record<string, unknown>): WorkspacePrefix {
  return {
    org_id: String(r.org_id),
    id: String(r.id),
    prefix: String(r.prefix),
    description: String(r.description),
    status: prefixStatusOf(r.status),
    created_at: Number(r.created_at),
    created_by: String(r.created_by),
    updated_at: Number(r.updated_at),
    version: Number(r.version),
  };
}

type Position = { created_at: number; id: string };

/**
 * The prefixes workspaces declared, as versioned rows (the highest version
 * of an id wins), with each prefix's address range stored beside it so that
 * overlaps are found in SQL on both ClickHouse generations.
 */
export class PrefixesRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(p: WorkspacePrefix): Promise<void> {
    const { first, last } = prefixRange(p.prefix);
    await this.ch.insertJsonEachRow('workspace_prefixes', JSON.stringify({ ...p, range_first: first, range_last: last }) + '\n');
  }

  async get(orgId: string, id: string): Promise<WorkspacePrefix | undefined> {
    return (await this.select(`org_id = ${str(orgId)} AND id = ${str(id)}`))[0];
  }

  /** One prefix by id, whatever its workspace: for the platform admin's decisions. */
  async byId(id: string): Promise<WorkspacePrefix | undefined> {
    return (await this.select(`id = ${str(id)}`))[0];
  }

  /** A workspace's prefixes, newest first, optionally in one status. */
  list(orgId: string, opts: { status?: PrefixStatus; limit: number; after?: Position }): Promise<WorkspacePrefix[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.after) {
      where.push(`(created_at < ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id < ${str(opts.after.id)}))`);
    }
    return this.select(`org_id = ${str(orgId)}`, where, `created_at DESC, id DESC LIMIT ${int(opts.limit)}`);
  }

  /** Every workspace's pending declarations, oldest first: the platform admin's queue. */
  pending(opts: { limit: number; after?: Position }): Promise<WorkspacePrefix[]> {
    const where = [`status = 'pending'`];
    if (opts.after) {
      where.push(`(created_at > ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id > ${str(opts.after.id)}))`);
    }
    return this.select('1', where, `created_at, id LIMIT ${int(opts.limit)}`);
  }

  /** The workspace's approved prefixes (CIDR): all that its mitigations may act within. */
  async approved(orgId: string): Promise<string[]> {
    return (await this.select(`org_id = ${str(orgId)}`, [`status = 'approved'`], 'prefix')).map((p) => p.prefix);
  }

  /** How many prefixes the workspace holds in these statuses. */
  async count(orgId: string, statuses: readonly PrefixStatus[]): Promise<number> {
    const rows = await this.ch.query<{ n: unknown }>(
      `SELECT count() AS n FROM (SELECT status FROM ${this.ch.database}.workspace_prefixes FINAL WHERE org_id = ${str(orgId)})
       WHERE status IN ${strList(statuses)}`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * The prefixes in these statuses that share an address with any of
   * `prefixes` (contain one, or lie within one), in any workspace or in
   * `orgId`'s only.
   */
  overlapping(prefixes: readonly string[], opts: { statuses: readonly PrefixStatus[]; orgId?: string }): Promise<WorkspacePrefix[]> {
    if (prefixes.length === 0 || opts.statuses.length === 0) return Promise.resolve([]);
    const ranges = prefixes.map(prefixRange).map((r) => `(range_first <= ${str(r.last)} AND range_last >= ${str(r.first)})`);
    const org = opts.orgId === undefined ? '1' : `org_id = ${str(opts.orgId)}`;
    return this.select(org, [`status IN ${strList(opts.statuses)}`, `(${ranges.join(' OR ')})`], 'created_at, id');
  }

  /**
   * Rows matching `inner` (on the stored columns, which FINAL then reduces
   * to each id's latest version) and then `outer` (on that latest version:
   * a status filter before FINAL would find an id's older versions).
   */
  private async select(inner: string, outer: string[] = [], orderBy?: string): Promise<WorkspacePrefix[]> {
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns}, range_first, range_last FROM ${this.ch.database}.workspace_prefixes FINAL WHERE ${inner})
       ${outer.length ? 'WHERE ' + outer.join(' AND ') : ''}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
    );
    return rows.map(fromRow);
  }
}
