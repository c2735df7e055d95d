import { createHash } from 'node:crypto';
import { conflict, notFound } from '../core/errors';
import { normalizeAddress, type Exporter, type UnknownExporter } from '../core/exporter';
import { randomId } from '../core/ids';
import type { ExportersRepo } from '../storage/exporters-repo';
import type { AuditLedger } from './audit-ledger';

/** What an exporter is registered with; `sampling_rate` null or absent: none registered. */
export interface ExporterInput {
  address: string;
  name?: string;
  sampling_rate?: number | null;
}

/** A change to an exporter: only the fields given change; `sampling_rate: null` clears it. */
export type ExporterChange = Partial<Pick<ExporterInput, 'name' | 'sampling_rate'>>;

/**
 * Registers, changes and deletes a workspace's flow exporters; every change
 * is audited. An address belongs to at most one workspace while it is
 * active; a deleted exporter frees its address.
 */
/** Runs work while holding a named lock shared by every API process (streams/locks.ts). */
export type WithLock = <T>(name: string, work: () => Promise<T>) => Promise<T>;

export class ExporterService {
  constructor(private readonly deps: { exporters: ExportersRepo; audit: AuditLedger; withLock: WithLock; now?: () => number }) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async create(orgId: string, actor: string, input: ExporterInput): Promise<Exporter> {
    const address = normalizeAddress(input.address);
    // ClickHouse has no unique constraint: the check and the write run under a lock per address, held
    // across every API process, so two registrations of one address cannot both pass the check.
    const lockName = `exporter-address-${createHash('sha256').update(address).digest('hex').slice(0, 32)}`;
    return this.deps.withLock(lockName, () => this.register(orgId, actor, input, address));
  }

  private async register(orgId: string, actor: string, input: ExporterInput, address: string): Promise<Exporter> {
    if ((await this.deps.exporters.activeByAddress(address)).length > 0) {
      throw conflict(`the address ${address} is already registered to a workspace`);
    }
    const now = this.now();
    const exporter: Exporter = {
      org_id: orgId,
      id: randomId('exp'),
      address,
      name: input.name ?? '',
      sampling_rate: input.sampling_rate ?? 0,
      status: 'active',
      created_at: now,
      updated_at: now,
      version: 1,
    };
    await this.deps.exporters.put(exporter);
    await this.deps.audit.append({ orgId, actor, action: 'exporter.create', target: exporter.id, details: { ...input, address } });
    return exporter;
  }

  async get(orgId: string, id: string): Promise<Exporter> {
    const exporter = await this.deps.exporters.get(orgId, id);
    if (!exporter) throw notFound('exporter');
    return exporter;
  }

  list(orgId: string, opts: { status?: Exporter['status']; limit: number; after?: { created_at: number; id: string } }): Promise<Exporter[]> {
    return this.deps.exporters.list(orgId, opts);
  }

  async update(orgId: string, actor: string, id: string, change: ExporterChange): Promise<Exporter> {
    const exporter = await this.activeExporter(orgId, id, 'a deleted exporter cannot be changed');
    const updated: Exporter = {
      ...exporter,
      name: change.name ?? exporter.name,
      sampling_rate: change.sampling_rate === undefined ? exporter.sampling_rate : (change.sampling_rate ?? 0),
      updated_at: this.now(),
      version: exporter.version + 1,
    };
    await this.deps.exporters.put(updated);
    await this.deps.audit.append({ orgId, actor, action: 'exporter.update', target: id, details: { ...change } });
    return updated;
  }

  async delete(orgId: string, actor: string, id: string): Promise<Exporter> {
    const exporter = await this.activeExporter(orgId, id, 'the exporter is already deleted');
    const deleted: Exporter = { ...exporter, status: 'deleted', updated_at: this.now(), version: exporter.version + 1 };
    await this.deps.exporters.put(deleted);
    await this.deps.audit.append({ orgId, actor, action: 'exporter.delete', target: id, details: { address: exporter.address } });
    return deleted;
  }

  /** Addresses that sent datagrams but no workspace registered: for the platform admin only. */
  unknown(limit: number): Promise<UnknownExporter[]> {
    return this.deps.exporters.unknown(limit);
  }

  private async activeExporter(orgId: string, id: string, deletedMessage: string): Promise<Exporter> {
    const exporter = await this.get(orgId, id);
    if (exporter.status === 'deleted') throw conflict(deletedMessage);
    return exporter;
  }
}
