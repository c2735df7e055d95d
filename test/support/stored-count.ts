import type { ClickHouse } from '../../storage/clickhouse';
import { str } from '../../storage/sql';
import { waitFor } from './wait';

/** The ClickHouse handle a count reads through: a stack's, or a second handle on its database. */
type Counted = Pick<ClickHouse, 'query' | 'database'>;

/** The condition selecting one workspace's rows. */
export const orgIs = (orgId: string): string => `org_id = ${str(orgId)}`;

/** How many rows of `table`, in the handle's database, match `where` (a SQL condition); every row without one. */
export async function storedCount(clickhouse: Counted, table: string, where?: string): Promise<number> {
  const rows = await clickhouse.query<{ n: string }>(`SELECT count() AS n FROM ${clickhouse.database}.${table}${where ? ` WHERE ${where}` : ''}`);
  return Number(rows[0]!.n);
}

/**
 * Waits until at least `expected` rows of `table` match `where`, and returns
 * how many there are then, so the test asserts the exact number (no more
 * arrived than it sent).
 */
export async function waitForStoredCount(
  clickhouse: Counted,
  table: string,
  expected: number,
  opts: { where?: string; timeoutMs?: number; what?: string } = {},
): Promise<number> {
  const what = opts.what ?? `${expected} rows in ${table}${opts.where ? ` where ${opts.where}` : ''}`;
  return waitFor(async () => {
    const n = await storedCount(clickhouse, table, opts.where);
    return n >= expected ? n : undefined;
  }, opts.timeoutMs, what);
}
