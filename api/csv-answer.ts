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

/**
 * GET /v1/telemetry/flows/top: a row per ranked key, a sankey's links
 * included (two or three `by` dimensions: a column each); with no key, the
 * header the asked dimensions and metrics would have.
 */
export function topTable(body: { data: Row[] }, ctx: Context): CsvTable {
  const by = (queryText(ctx, 'by') ?? 'dst_ip').split(',').map((d) => d.trim());
  const metric = queryText(ctx, 'metric') ?? queryText(ctx, 'unit') ?? 'bytes';
  const metrics = queryText(ctx, 'totals') === 'all' ? ['bytes', 'packets', 'flows'] : metric === 'flows' ? ['flows'] : [metric, 'flows'];
  const rate = queryText(ctx, 'unit') === undefined ? [] : ['rate'];
  const previous = queryText(ctx, 'previous') === 'true' ? [...metrics.map((m) => `previous_${m}`), ...rate.map((r) => `previous_${r}`)] : [];
  return recordsTable(body.data, [...by, ...metrics, ...rate, ...previous]);
}

interface SeriesBody {
  series: Array<{ key: Row | null; points: Row[]; previous?: Row[] }>;
}

/** A series' points, each with the previous period's point of its step as `previous_<field>` (its own `t` as `previous_t`). */
const withPrevious = (s: SeriesBody['series'][number]): Row[] =>
  s.points.map((p, i) => {
    const before = s.previous?.[i];
    if (!before) return p;
    const volumes = Object.entries(before).filter(([k]) => k !== 't' && k !== 't_previous');
    return { ...p, previous_t: before.t_previous, ...Object.fromEntries(volumes.map(([k, v]) => [`previous_${k}`, v])) };
  });

/** GET /v1/telemetry/flows/series: a row per series and step (long form), the step's time first, then the split key, then the volumes (and the previous period's). */
export function flowSeriesTable(body: SeriesBody): CsvTable {
  const keys = recordsTable(body.series.map((s) => s.key ?? {}), []).columns;
  const points = body.series.map(withPrevious);
  const volumes = recordsTable(points.flat(), ['t', 'bps', 'pps', 'bytes', 'packets']).columns.filter((c) => c !== 't');
  const columns = ['t', ...keys, ...volumes];
  const rows = body.series.flatMap((s, i) => (points[i] ?? []).map((p) => columns.map((c) => (s.key && c in s.key ? s.key[c] : p[c]))));
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
