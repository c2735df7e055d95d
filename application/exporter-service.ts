import { createHash } from 'node:crypto';
import { conflict, notFound } from '../core/errors';
import { normalizeAddress, type Exporter, type ExporterStatus, type UnknownExporter } from '../core/exporter';
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

/** A pending registration as the platform admin sees it: with the exporter active at its address, if any. */
export interface PendingExporter extends Exporter {
  activeAtAddress?: { org_id: string; id: string };
}

/** Runs work while holding a named lock shared by every API process (streams/locks.ts). */
export type WithLock = <T>(name: string, work: () => Promise<T>) => Promise<T>;

type Page = { limit: number; after?: { created_at: number; id: string } };

/** Statuses in which a registration holds its workspace's claim on the address. */
const claiming: ExporterStatus[] = ['pending', 'active'];

function pendingOnly(exporter: Exporter, verb: string): Exporter {
  if (exporter.status !== 'pending') throw conflict(`only a pending exporter can be ${verb}; this one is ${exporter.status}`);
  return exporter;
}

/** The lock every check-then-write on one address runs under, in every API process. */
const addressLock = (address: string) => `exporter-address-${createHash('sha256').update(address).digest('hex').slice(0, 32)}`;

/**
 * Registers, changes and deletes a workspace's flow exporters, and lets the
 * platform admin approve or reject registrations; every change is audited in
 * the exporter's workspace. A registration is pending until approved, and
 * its answer says nothing of other workspaces: an address another workspace
 * holds is registered like a free one, and simply cannot be approved while
 * the other holds it (docs/security/exporters.md). An address is active for
 * at most one workspace; a deleted exporter frees its address.
 */
export class ExporterService {
  constructor(private readonly deps: { exporters: ExportersRepo; audit: AuditLedger; withLock: WithLock; now?: () => number }) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async create(orgId: string, actor: string, input: ExporterInput): Promise<Exporter> {
    const address = normalizeAddress(input.address);
    // ClickHouse has no unique constraint: the check and the write run under the address's lock, so
    // two registrations of one address by one workspace cannot both pass the check.
    return this.deps.withLock(addressLock(address), () => this.register(orgId, actor, input, address));
  }

  private async register(orgId: string, actor: string, input: ExporterInput, address: string): Promise<Exporter> {
    // Only the caller's own registrations are looked at: whether another workspace holds the address must not show.
    if ((await this.deps.exporters.atAddresses([address], { statuses: claiming, orgId })).length > 0) {
      throw conflict(`this workspace has already registered the address ${address}`);
    }
    const now = this.now();
    const exporter: Exporter = {
      org_id: orgId,
      id: randomId('exp'),
      address,
      name: input.name ?? '',
      sampling_rate: input.sampling_rate ?? 0,
      status: 'pending',
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

  list(orgId: string, opts: Page & { status?: ExporterStatus }): Promise<Exporter[]> {
    return this.deps.exporters.list(orgId, opts);
  }

  update(orgId: string, actor: string, id: string, change: ExporterChange): Promise<Exporter> {
    return this.underLock(
      () => this.get(orgId, id),
      async (exporter) => {
        if (!claiming.includes(exporter.status)) throw conflict(`a ${exporter.status} exporter cannot be changed`);
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
      },
    );
  }

  /** Removes an active exporter, or withdraws a pending registration. */
  delete(orgId: string, actor: string, id: string): Promise<Exporter> {
    return this.underLock(
      () => this.get(orgId, id),
      (exporter) => {
        if (!claiming.includes(exporter.status)) throw conflict(`the exporter is already ${exporter.status}`);
        return this.decide(exporter, actor, 'deleted', 'exporter.delete');
      },
    );
  }

  /** Every workspace's pending registrations, oldest first: for the platform admin only. */
  async pending(opts: Page): Promise<PendingExporter[]> {
    const rows = await this.deps.exporters.pending(opts);
    const active = await this.deps.exporters.atAddresses([...new Set(rows.map((e) => e.address))], { statuses: ['active'] });
    const holder = new Map(active.map((e) => [e.address, { org_id: e.org_id, id: e.id }]));
    return rows.map((e) => ({ ...e, activeAtAddress: holder.get(e.address) }));
  }

  /**
   * The platform admin approves a pending registration: from then on its
   * address routes to its workspace. Refused (409) while another exporter is
   * active at the address; checked and written under the address's lock.
   */
  approve(actor: string, id: string): Promise<Exporter> {
    return this.underLock(
      () => this.anyWorkspace(id),
      async (exporter) => {
        pendingOnly(exporter, 'approved');
        const holder = (await this.deps.exporters.atAddresses([exporter.address], { statuses: ['active'] })).find((e) => e.id !== id);
        if (holder) throw conflict(`the address ${exporter.address} is active for exporter ${holder.id} of workspace ${holder.org_id}`);
        return this.decide(exporter, actor, 'active', 'exporter.approve');
      },
    );
  }

  /** The platform admin rejects a pending registration: it will never route. */
  reject(actor: string, id: string): Promise<Exporter> {
    return this.underLock(
      () => this.anyWorkspace(id),
      (exporter) => this.decide(pendingOnly(exporter, 'rejected'), actor, 'rejected', 'exporter.reject'),
    );
  }

  /** Addresses that sent datagrams but no workspace has active: for the platform admin only. */
  unknown(limit: number): Promise<UnknownExporter[]> {
    return this.deps.exporters.unknown(limit);
  }

  private async anyWorkspace(id: string): Promise<Exporter> {
    const exporter = await this.deps.exporters.byId(id);
    if (!exporter) throw notFound('exporter');
    return exporter;
  }

  /**
   * Runs `work` on an exporter read again under its address's lock, so that
   * no change, deletion or decision of it interleaves with another (each
   * writes the next version: two written from one version would collide).
   */
  private async underLock<T>(read: () => Promise<Exporter>, work: (exporter: Exporter) => Promise<T>): Promise<T> {
    const { address } = await read();
    return this.deps.withLock(addressLock(address), async () => work(await read()));
  }

  /** Writes the exporter's next version in `status` and audits it in the exporter's workspace. */
  private async decide(exporter: Exporter, actor: string, status: ExporterStatus, action: string): Promise<Exporter> {
    const next: Exporter = { ...exporter, status, updated_at: this.now(), version: exporter.version + 1 };
    await this.deps.exporters.put(next);
    await this.deps.audit.append({ orgId: exporter.org_id, actor, action, target: exporter.id, details: { address: exporter.address } });
    return next;
  }
}
