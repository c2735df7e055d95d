import type { Context, Middleware, Next } from 'koa';
import { toCsv, type CsvTable, type CsvValue } from '../core/csv';

/**
 * `Accept: text/csv` on the analysts' top-N and series routes: the route
 * answers JSON as always, and this middleware, placed before it, rewrites a
 * 200 answer as CSV (core/csv.ts) when the client prefers text/csv to JSON.
 * The routes stay unaware of the format, and one table shape per answer
 * shape keeps the CSV's numbers those of the JSON.
 *
 * Errors are thrown past it to the error middleware, so they stay JSON
 * whatever the Accept header. An Accept that names neither JSON nor CSV
 * (`application/xml`) answers JSON, as every other route does: refusing it
 * with 406 would break clients that send a browser's Accept list.
 */
type Row = Record<string, CsvValue>;

/** The columns: every field of the records in the order they first appear, or `fallback` when there is no record. */
export function recordsTable(records: readonly Row[], fallback: readonly string[]): CsvTable {
  const seen = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) seen.add(k);
  const columns = seen.size ? [...seen] : fallback;
  return { columns, rows: records.map((r) => columns.map((c) => r[c])) };
}

function queryText(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : undefined;
}

/** GET /v1/telemetry/flows/top: a row per ranked key (with no key, the header the asked dimensions and metrics would have). */
export function topTable(body: { data: Row[] }, ctx: Context): CsvTable {
  const by = (queryText(ctx, 'by') ?? 'dst_ip').split(',').map((d) => d.trim());
  const metric = queryText(ctx, 'metric') ?? 'bytes';
  const metrics = queryText(ctx, 'totals') === 'all' ? ['bytes', 'packets', 'flows'] : metric === 'flows' ? ['flows'] : [metric, 'flows'];
  return recordsTable(body.data, [...by, ...metrics]);
}

interface SeriesBody {
  series: Array<{ key: Row | null; points: Row[] }>;
}

/** GET /v1/telemetry/flows/series: a row per series and step (long form), the step's time first, then the split key, then the volumes. */
export function flowSeriesTable(body: SeriesBody): CsvTable {
  const keys = recordsTable(body.series.map((s) => s.key ?? {}), []).columns;
  const volumes = recordsTable(body.series.flatMap((s) => s.points), ['t', 'bps', 'pps', 'bytes', 'packets']).columns.filter((c) => c !== 't');
  const columns = ['t', ...keys, ...volumes];
  const rows = body.series.flatMap((s) => s.points.map((p) => columns.map((c) => (s.key && c in s.key ? s.key[c] : p[c]))));
  return { columns, rows };
}

/** GET /v1/telemetry/metrics/series: a row per step. */
export function metricSeriesTable(body: { data: Row[] }): CsvTable {
  return recordsTable(body.data, ['t', 'avg', 'samples']);
}

/** The middleware for one answer shape; `name` names the downloaded file. */
export function csvAnswer<B>(name: string, table: (body: B, ctx: Context) => CsvTable): Middleware {
  return async function answerCsv(ctx: Context, next: Next): Promise<void> {
    ctx.vary('Accept');
    await next();
    if (ctx.status !== 200 || ctx.accepts('application/json', 'text/csv') !== 'text/csv') return;
    const csv = toCsv(table(ctx.body as B, ctx));
    ctx.attachment(`${name}.csv`);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = csv;
  };
}

export const topCsv = csvAnswer('flows-top', topTable);
export const flowSeriesCsv = csvAnswer('flows-series', flowSeriesTable);
export const metricSeriesCsv = csvAnswer('metrics-series', metricSeriesTable);
