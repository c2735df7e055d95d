import type { ClickHouse } from '../../storage/clickhouse';

/** The same ClickHouse, with every query it is sent noted in `statements`, for tests that count what a component reads. */
export function countingClickHouse(ch: ClickHouse): { ch: ClickHouse; statements: string[] } {
  const statements: string[] = [];
  const counted: ClickHouse = Object.assign(Object.create(ch) as ClickHouse, { query: <T,>(sql: string) => (statements.push(sql), ch.query<T>(sql)) });
  return { ch: counted, statements };
}
