import { exporterStatusOf, type Exporter, type ExporterStatus, type UnknownExporter } from '../core/exporter';
import type { ClickHouse } from './clickhouse';
import { int, str, strList } from './sql';

const columns = 'org_id, id, address, name, sampling_rate, status, created_at, updated_at, version';

function fromRow(r: Record<string, unknown>): Exporter {
  return {
    org_id: String(r.org_id),
    id: String(r.id),
    address: String(r.address),
    name: String(r.name),
    sampling_rate: Number(r.sampling_rate),
    status: exporterStatusOf(r.status),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    version: Number(r.version),
  };
}

/** One address's datagrams and flows in one minute (epoch ms of its start). */
export interface UnknownExporterCount {
  address: string;
  minute: number;
  datagrams: number;
  flows: number;
}

/** Registered exporters as versioned rows, and the unknown exporters the collector counts. */
export class ExportersRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(e: Exporter): Promise<void> {
    await this.ch.insertJsonEachRow('exporters', JSON.stringify(e) + '\n');
  }

  async get(orgId: string, id: string): Promise<Exporter | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.exporters FINAL WHERE org_id = ${str(orgId)} AND id = ${str(id)}`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** One exporter by id, whatever its workspace: for the platform admin's decisions. */
  async byId(id: string): Promise<Exporter | undefined> {
    const rows = await this.ch.query(`SELECT ${columns} FROM ${this.ch.database}.exporters FINAL WHERE id = ${str(id)}`);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** The registrations of these addresses in these statuses, in any workspace or in `orgId`'s only. */
  async atAddresses(addresses: string[], opts: { statuses: ExporterStatus[]; orgId?: string }): Promise<Exporter[]> {
    if (addresses.length === 0 || opts.statuses.length === 0) return [];
    const org = opts.orgId === undefined ? '' : ` AND org_id = ${str(opts.orgId)}`;
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.exporters FINAL WHERE address IN ${strList(addresses)}${org})
       WHERE status IN ${strList(opts.statuses)}`,
    );
    return rows.map(fromRow);
  }

  /** Every workspace's pending registrations, oldest first: the platform admin's queue. */
  async pending(opts: { limit: number; after?: { created_at: number; id: string } }): Promise<Exporter[]> {
    const after = opts.after
      ? `AND (created_at > ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id > ${str(opts.after.id)}))`
      : '';
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.exporters FINAL)
       WHERE status = 'pending' ${after} ORDER BY created_at, id LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }

  /** Every workspace's active exporters: what a collector routes datagrams by. */
  async allActive(): Promise<Exporter[]> {
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.exporters FINAL) WHERE status = 'active'`,
    );
    return rows.map(fromRow);
  }

  /** Adds counts of datagrams and flows from unregistered addresses, per address and minute. */
  async recordUnknown(counts: UnknownExporterCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.ch.insertJsonEachRow('unknown_exporters', counts.map((c) => JSON.stringify(c)).join('\n') + '\n');
  }

  async list(orgId: string, opts: { status?: ExporterStatus; limit: number; after?: { created_at: number; id: string } }): Promise<Exporter[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.after) {
      where.push(`(created_at < ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id < ${str(opts.after.id)}))`);
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.exporters FINAL WHERE org_id = ${str(orgId)})
       ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }

  /**
   * Addresses datagrams came from that no workspace has registered now,
   * most recently seen first. Rows are per address and minute; they are
   * summed here, so unmerged parts count the same as merged ones.
   */
  async unknown(limit: number): Promise<UnknownExporter[]> {
    const db = this.ch.database;
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT address, min(minute) AS first_seen, max(minute) AS last_seen, sum(datagrams) AS datagrams, sum(flows) AS flows
       FROM ${db}.unknown_exporters
       WHERE address NOT IN (SELECT address FROM (SELECT address, status FROM ${db}.exporters FINAL) WHERE status = 'active')
       GROUP BY address ORDER BY last_seen DESC, address LIMIT ${int(limit)}`,
    );
    return rows.map((r) => ({
      address: String(r.address),
      first_seen: Number(r.first_seen),
      last_seen: Number(r.last_seen),
      datagrams: Number(r.datagrams),
      flows: Number(r.flows),
    }));
  }
}
