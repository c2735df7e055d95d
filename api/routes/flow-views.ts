import { alignedPrevious, previousRange, ratePerSecond, ratePoints, type FlowUnit, type RatePoint, type TimeSpan } from '../../core/analytics/rates';
import type { Segment } from '../../core/resolution';
import { iso } from '../../core/time';
import type { FlowSeries } from '../../storage/analytics-repo';
import type { FlowTopRow } from '../../storage/flow-analytics';

/**
 * The answers of the analysts' top-N and series as the API shows them:
 * times as ISO text, a row's or point's rate in the asked unit, and the
 * previous period beside the current one (core/analytics/rates.ts).
 */
type Metric = 'bytes' | 'packets' | 'flows';

export const segmentView = (s: Segment) => ({ from: iso(s.from), to: iso(s.to), resolution: s.resolution });

export const rangeView = (r: TimeSpan) => ({ from: iso(r.from), to: iso(r.to) });

/** The metrics a top row shows: the ranked metric and flows (as the API always answered), or every total. */
const shownMetrics = (metric: Metric, totals: 'metric' | 'all'): Metric[] =>
  totals === 'all' ? ['bytes', 'packets', 'flows'] : metric === 'flows' ? ['flows'] : [metric, 'flows'];

/** A row's key texts as one string, to find the same key in the previous period. */
export const keyId = (row: Pick<FlowTopRow, 'text'>) => row.text.join('\u0000');

export interface TopShape {
  metric: Metric;
  totals: 'metric' | 'all';
  /** Asked: each row gets `rate`; not asked, rows are as before units existed. */
  unit?: FlowUnit;
  range: TimeSpan;
}

/**
 * A top row: its dimensions, the metrics shown, with a unit `rate` (the
 * unit per second over the range), and with the previous period
 * `previous_<metric>` (and `previous_rate`) of the same key, zeros where it
 * carried nothing then.
 */
export function topRowView(row: FlowTopRow, shape: TopShape, previous?: Map<string, FlowTopRow>) {
  const { unit, range } = shape;
  const metrics = shownMetrics(shape.metric, shape.totals);
  const view: Record<string, string | number | null> = { ...row.key, ...row.names };
  for (const m of metrics) view[m] = row[m];
  if (unit) view.rate = ratePerSecond(row[unit], range);
  if (!previous) return view;
  const before = previous.get(keyId(row));
  for (const m of metrics) view[`previous_${m}`] = before?.[m] ?? 0;
  if (unit) view.previous_rate = ratePerSecond(before?.[unit] ?? 0, range);
  return view;
}

/** A point as the API shows it: with a unit, flows, flows per second and the rate too; without, as before units existed. */
function pointView(p: RatePoint, unit: FlowUnit | undefined) {
  const { fps, flows, rate, ...legacy } = p;
  return { ...legacy, t: iso(p.t), ...(unit ? { fps, flows, rate } : {}) };
}

/** A series with its points (one per step), and with the previous period its points laid on the same steps. */
export function seriesView(s: FlowSeries, range: TimeSpan, stepMs: number, unit: FlowUnit | undefined, previous?: FlowSeries) {
  const points = ratePoints(range, stepMs, s.volumes, unit ?? 'bytes');
  const view = { key: s.key, points: points.map((p) => pointView(p, unit)) };
  if (!previous) return view;
  const before = ratePoints(previousRange(range), stepMs, previous.volumes, unit ?? 'bytes');
  const aligned = alignedPrevious(points, before, range, stepMs);
  return { ...view, previous: aligned.map((p) => ({ ...pointView(p, unit), t_previous: iso(p.t_previous) })) };
}
