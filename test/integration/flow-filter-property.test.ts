import { randomBytes } from 'node:crypto';
import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { readFilter, type CheckedFilter } from '../../core/analytics/filter/check';
import { evaluateFilter } from '../../core/analytics/filter/evaluate';
import { filterSql } from '../../storage/analytics/filter-sql';
import { str } from '../../storage/sql';
import { filterGenerators, type GeneratedFlow } from '../support/flow-filters';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * The property that makes the filter language trustworthy: for generated
 * flows and generated filters, the compiled SQL run by ClickHouse selects
 * exactly the flows the plain evaluator selects. The flows sit in a table of
 * their own, in a fresh database, with the columns (and the generation's
 * types) the catalog names; the filters are texts, so the parser and the
 * checker are in the loop too. Seeded: a failure names its filter and seed.
 */
const seed = 20261129;
const flowCount = 400;
const filterCount = 500;
const batch = 60;

describe.each(transports)('the filter language against ClickHouse on %s', (transport) => {
  let t: TestStack;
  const db = `filter_prop_${randomBytes(4).toString('hex')}`;
  const generate = filterGenerators(seed, flowFilterCatalog);
  const flows: GeneratedFlow[] = Array.from({ length: flowCount }, (_, i) => generate.flow(i));

  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
    const ch = t.stack.clickhouse;
    const d = ch.dialect;
    const typeOf = { address: d.addressType, number: '', string: d.labelType };
    const numberType = (max = 0) => (max <= 255 ? 'UInt8' : max <= 65_535 ? 'UInt16' : 'UInt32');
    const columns = Object.entries(flowFilterCatalog.dimensions).map(([name, spec]) => `${name} ${spec.type === 'number' ? numberType(spec.max) : typeOf[spec.type]}`);
    await ch.exec(`CREATE DATABASE IF NOT EXISTS ${db}`);
    await ch.exec(`CREATE TABLE ${db}.flows (id UInt32, ${columns.join(', ')}) ENGINE = Memory`);
    const literal = (name: string, value: string | number) => {
      const spec = flowFilterCatalog.dimensions[name]!;
      if (spec.type === 'number') return String(value);
      if (spec.type === 'string') return str(String(value));
      return value === '' ? d.noAddress : d.addressLiteral(String(value));
    };
    const names = Object.keys(flowFilterCatalog.dimensions);
    const rows = flows.map((f) => `(${f.id}, ${names.map((n) => literal(n, f[n]!)).join(', ')})`);
    await ch.exec(`INSERT INTO ${db}.flows (id, ${names.join(', ')}) VALUES ${rows.join(', ')}`);
  });
  afterAll(async () => {
    await t.stack.clickhouse.exec(`DROP DATABASE IF EXISTS ${db}`).catch(() => undefined);
    await t.stop();
  });

  test(`${filterCount} generated filters select in ClickHouse exactly the flows the plain evaluator selects`, async () => {
    const ch = t.stack.clickhouse;
    const stored = await ch.query<{ n: string }>(`SELECT count() AS n FROM ${db}.flows`);
    expect(Number(stored[0]!.n)).toBe(flowCount);
    const cases: Array<{ text: string; filter: CheckedFilter }> = [];
    while (cases.length < filterCount) {
      const text = generate.filter();
      cases.push({ text, filter: readFilter(text, flowFilterCatalog)! });
    }
    const mismatches: string[] = [];
    let selectedSome = 0;
    for (let start = 0; start < cases.length; start += batch) {
      const part = cases.slice(start, start + batch);
      const conditions = part.map((c, i) => `toUInt8(${filterSql(ch.dialect, c.filter, flowFilterCatalog, 'raw')}) AS m${i}`);
      const rows = await ch.query<Record<string, string | number>>(`SELECT id, ${conditions.join(', ')} FROM ${db}.flows ORDER BY id`);
      part.forEach((c, i) => {
        const bySql = rows.filter((r) => Number(r[`m${i}`]) === 1).map((r) => Number(r.id));
        const byEvaluator = flows.filter((f) => evaluateFilter(c.filter, f)).map((f) => f.id);
        if (bySql.length > 0 && bySql.length < flowCount) selectedSome += 1;
        if (JSON.stringify(bySql) !== JSON.stringify(byEvaluator)) {
          const differ = flows.find((f) => bySql.includes(f.id) !== byEvaluator.includes(f.id));
          mismatches.push(`${c.text}\n  sql: ${bySql.length} rows, evaluator: ${byEvaluator.length}; first differing flow ${JSON.stringify(differ)}`);
        }
      });
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    // The generator must exercise both outcomes: most filters select some flows and leave others.
    expect(selectedSome).toBeGreaterThan(filterCount / 3);
  });
});
