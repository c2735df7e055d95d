import { conflict, notFound } from '../core/errors';
import { randomId } from '../core/ids';
import { checkViewFilter, maxViewsPerWorkspace, type StoredView, type ViewInput } from '../core/saved-views';
import type { SavedViewsRepo } from '../storage/saved-views-repo';
import type { AuditLedger } from './audit-ledger';
import type { WithLock } from './exporter-service';
import { putNextVersion, sameDocument } from './versioned-document';

/**
 * A workspace's saved views, each a versioned document
 * (application/versioned-document.ts): a change writes the view's next
 * version under a lock every API process shares, a stale `version` is 409,
 * a change to what is in force writes nothing, and each written version is
 * audited (`view.create`, `view.update`, `view.delete`).
 */
export class SavedViewsService {
  constructor(private readonly deps: { repo: SavedViewsRepo; audit: AuditLedger; withLock: WithLock; now?: () => number }) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** The workspace's views, by name. */
  async list(orgId: string): Promise<StoredView[]> {
    const views = (await this.deps.repo.latest(orgId)).filter((v) => !v.deleted);
    return views.sort((a, b) => a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
  }

  async get(orgId: string, id: string): Promise<StoredView> {
    const [view] = await this.deps.repo.latest(orgId, id);
    if (!view || view.deleted) throw notFound('view');
    return view;
  }

  async create(orgId: string, actor: string, input: ViewInput): Promise<StoredView> {
    checkViewFilter(input.state);
    if ((await this.list(orgId)).length >= maxViewsPerWorkspace) throw conflict(`a workspace keeps at most ${maxViewsPerWorkspace} views: delete one first`);
    const id = randomId('vw');
    const none: StoredView = { id, version: 0, ...input, deleted: false, created_at: 0, updated_at: 0, created_by: actor };
    return this.change(orgId, actor, none, undefined, 'view.create', () => ({ ...input, deleted: false, created_at: this.now() }));
  }

  /** `startedFrom`: the version the caller edited; another one in force is 409. */
  async update(orgId: string, actor: string, id: string, input: ViewInput, startedFrom?: number): Promise<StoredView> {
    checkViewFilter(input.state);
    const current = await this.get(orgId, id);
    return this.change(orgId, actor, current, startedFrom, 'view.update', (v) => ({ ...input, deleted: false, created_at: v.created_at }));
  }

  /** The view's last version, which says it is deleted. */
  async delete(orgId: string, actor: string, id: string): Promise<StoredView> {
    const current = await this.get(orgId, id);
    return this.change(orgId, actor, current, undefined, 'view.delete', (v) => ({ name: v.name, state: v.state, deleted: true, created_at: v.created_at }));
  }

  private change(
    orgId: string, actor: string, known: StoredView, startedFrom: number | undefined, action: string,
    next: (current: StoredView) => Pick<StoredView, 'name' | 'state' | 'deleted' | 'created_at'>,
  ): Promise<StoredView> {
    let proposed: ReturnType<typeof next> | undefined;
    return putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the view',
      lock: `view-${orgId}-${known.id}`,
      current: async () => {
        const current = known.version === 0 ? known : await this.get(orgId, known.id);
        proposed = next(current);
        return current;
      },
      sameAs: (current) => current.version > 0 && sameDocument({ name: current.name, state: current.state, deleted: current.deleted }, { name: proposed!.name, state: proposed!.state, deleted: proposed!.deleted }),
      write: async (version) => {
        const written: StoredView = { id: known.id, version, ...proposed!, updated_at: this.now(), created_by: version === 1 ? actor : known.created_by };
        await this.deps.repo.put(orgId, written, actor);
        return written;
      },
      audit: { action, details: (written) => ({ view_id: written.id, name: written.name }) },
    });
  }
}
