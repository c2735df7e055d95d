import type { ClickHouse } from '../clickhouse';
import { int, str } from '../sql';

/** What an enrichment version id stands for: the databases in use when a flow was enriched. */
export interface EnrichmentVersion {
  id: number;
  country_db: string;
  as_db: string;
  loaded_at: number;
}

/**
 * The enrichment's own tables (storage/migrations/enrichment.ts): the
 * versions of the address databases and the AS names reads resolve. A
 * version's id is a hash of what it names, so processes record it without
 * agreeing on a counter; writing one twice is harmless (ReplacingMergeTree).
 */
export class EnrichmentRepo {
  constructor(private readonly ch: ClickHouse) {}

  async recordVersion(v: EnrichmentVersion): Promise<void> {
    await this.ch.insertJsonEachRow('enrichment_versions', JSON.stringify(v) + '\n');
  }

  async versions(): Promise<EnrichmentVersion[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT id, argMax(country_db, loaded_at) AS country_db, argMax(as_db, loaded_at) AS as_db, max(loaded_at) AS loaded_at
       FROM ${this.ch.database}.enrichment_versions GROUP BY id ORDER BY loaded_at`,
    );
    return rows.map((r) => ({ id: Number(r.id), country_db: String(r.country_db), as_db: String(r.as_db), loaded_at: Number(r.loaded_at) }));
  }

  /** Whether the names of an AS database are loaded already (by this process or another). */
  async asNamesLoaded(asDb: string): Promise<boolean> {
    const rows = await this.ch.query<{ n: string }>(`SELECT count() AS n FROM ${this.ch.database}.as_names WHERE as_db = ${str(asDb)}`);
    return Number(rows[0]?.n ?? 0) > 0;
  }

  /** Stores an AS database's names, in chunks so no insert grows past a few megabytes. */
  async loadAsNames(asDb: string, names: ReadonlyMap<number, string>, loadedAt: number): Promise<void> {
    const chunk: string[] = [];
    const flush = async () => {
      if (chunk.length) await this.ch.insertJsonEachRow('as_names', chunk.join('\n') + '\n');
      chunk.length = 0;
    };
    for (const [asn, name] of names) {
      chunk.push(JSON.stringify({ asn, name, as_db: asDb, loaded_at: loadedAt }));
      if (chunk.length >= 50_000) await flush();
    }
    await flush();
  }
}

/**
 * The names of AS numbers, the newest load of each winning; an AS no
 * database names is left out. Reads resolve names here, so a renamed AS
 * needs no rewrite of stored flows.
 */
export async function asNamesOf(ch: Pick<ClickHouse, 'database' | 'query'>, asns: readonly number[]): Promise<Map<number, string>> {
  const wanted = [...new Set(asns.filter((n) => n > 0))];
  if (wanted.length === 0) return new Map();
  const rows = await ch.query<{ asn: string; name: string }>(
    `SELECT asn, argMax(name, loaded_at) AS name FROM ${ch.database}.as_names WHERE asn IN (${wanted.map(int).join(', ')}) GROUP BY asn`,
  );
  return new Map(rows.map((r) => [Number(r.asn), String(r.name)]));
}
