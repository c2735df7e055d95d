import { parseStoredState, type StoredView } from '../core/saved-views';
import type { ClickHouse } from './clickhouse';
import { str } from './sql';

const columns = 'id, version, name, state, deleted, created_at, updated_at, created_by';

/**
 * A workspace's saved views, one immutable row per version; a view is its
 * latest version (LIMIT 1 BY: both generations have it), and a deleted one
 * is a last version that says so. A stored state that no longer parses
 * leaves its view out rather than failing the list.
 */
export class SavedViewsRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** The latest version of each view of the workspace (deleted ones included), or of one view. */
  async latest(orgId: string, id?: string): Promise<StoredView[]> {
    const where = `org_id = ${str(orgId)}${id === undefined ? '' : ` AND id = ${str(id)}`}`;
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT ${columns} FROM ${this.ch.database}.saved_views WHERE ${where} ORDER BY id, version DESC LIMIT 1 BY id`,
    );
    return rows.flatMap((r) => {
      const state = parseStoredState(String(r.state));
      if (!state) return [];
      return [{
        id: String(r.id), version: Number(r.version), name: String(r.name), state, deleted: Number(r.deleted) === 1,
        created_at: Number(r.created_at), updated_at: Number(r.updated_at), created_by: String(r.created_by),
      }];
    });
  }

  async put(orgId: string, view: StoredView, actor: string): Promise<void> {
    const row = { org_id: orgId, ...view, state: JSON.stringify(view.state), deleted: view.deleted ? 1 : 0, updated_by: actor };
    await this.ch.insertJsonEachRow('saved_views', JSON.stringify(row) + '\n');
  }
}
