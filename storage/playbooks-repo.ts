import { storedPerson } from '../core/person';
import { parseStoredPlaybooks, type VersionedPlaybooks } from '../core/playbooks';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';
import { setNewest } from '../core/bounded-map';

/** Stored versions kept in memory at most: every run reads the version it follows, a few times. */
const versionsKept = 1_000;
/** Histories kept at most: each holds every version up to its last. */
const historiesKept = 100;

/** A workspace's playbooks, one immutable row per version of the document (version 0, no playbook, is never stored). */
export class PlaybooksRepo {
  /** Stored versions read before, by workspace and version: a stored version never changes, so no read of it goes stale. */
  private readonly known = new Map<string, VersionedPlaybooks>();
  /** Histories up to a stored version, by workspace and that version. */
  private readonly histories = new Map<string, VersionedPlaybooks[]>();

  constructor(private readonly ch: ClickHouse) {}

  /**
   * Every stored version up to `through`, oldest first: whose change each
   * playbook is (the automation starter asks it for each run it starts).
   * Once `through` is stored, no version up to it can change or appear, so
   * such a history is kept, the oldest read forgotten past `historiesKept`.
   */
  async versions(orgId: string, through: number): Promise<VersionedPlaybooks[]> {
    const key = `${orgId}\u0000${through}`;
    const known = this.histories.get(key);
    if (known) return known;
    const found = await this.read(`WHERE org_id = ${str(orgId)} AND version <= ${int(through)} ORDER BY version`);
    if (found.at(-1)?.version === through) setNewest(this.histories, key, found, historiesKept);
    return found;
  }

  /** The latest stored version, if any: what the automation starter matches every triggering incident against. */
  async latest(orgId: string): Promise<VersionedPlaybooks | undefined> {
    return (await this.read(`WHERE org_id = ${str(orgId)} ORDER BY version DESC LIMIT 1`))[0];
  }

  /**
   * One stored version, if it exists: what an automation run follows (each of
   * its activities reads it). Found versions are kept, the oldest read
   * forgotten past `versionsKept`; a missing one is read again next time.
   */
  async version(orgId: string, version: number): Promise<VersionedPlaybooks | undefined> {
    const key = `${orgId}\u0000${version}`;
    const known = this.known.get(key);
    if (known) return known;
    const found = (await this.read(`WHERE org_id = ${str(orgId)} AND version = ${int(version)}`))[0];
    if (found) setNewest(this.known, key, found, versionsKept);
    return found;
  }

  private async read(clauses: string): Promise<VersionedPlaybooks[]> {
    const rows = await this.ch.query<Record<string, unknown>>(`SELECT version, playbooks, created_at, actor, actor_person FROM ${this.ch.database}.playbooks FINAL ${clauses}`);
    return rows.map((r) => ({
      version: Number(r.version),
      playbooks: parseStoredPlaybooks(String(r.playbooks)),
      created_at: Number(r.created_at),
      actor: String(r.actor),
      actor_person: storedPerson(r.actor_person, String(r.actor)),
    }));
  }

  async put(orgId: string, v: VersionedPlaybooks): Promise<void> {
    const row = { org_id: orgId, version: v.version, playbooks: JSON.stringify(v.playbooks), created_at: v.created_at ?? 0, actor: v.actor, actor_person: JSON.stringify(v.actor_person) };
    await this.ch.insertJsonEachRow('playbooks', JSON.stringify(row) + '\n');
  }
}
