import { request } from '../../api';
import { reverseDimension, reverseFilter } from './filter-text';
import { ranges, type Unit, type VisualizeState } from './state';

/**
 * What the visualize page asks the API, and what it makes of the answers:
 * rates per second in the chosen unit, the previous period and the reverse
 * direction. The routes are /v1/telemetry/flows/top and /series (Accept:
 * text/csv for the download); `unit` and `previous` are sent only where the
 * API declares them (its OpenAPI document), and an answer without a previous
 * period gets one by asking the same query shifted back by the range.
 */
export interface Features {
  unit: boolean;
  previous: boolean;
  complete: boolean;
  views: boolean;
}

interface OpenApi {
  paths?: Record<string, { get?: { parameters?: { name: string }[] } }>;
}

let features: Promise<Features> | undefined;

/** The optional parts of the analyst API this service has, read once from GET /v1/openapi.json. */
export function apiFeatures(): Promise<Features> {
  features ??= request<OpenApi>('GET', '/v1/openapi.json').then(
    (doc) => {
      const names = (doc.paths?.['/v1/telemetry/flows/top']?.get?.parameters ?? []).map((p) => p.name);
      return { unit: names.includes('unit'), previous: names.includes('previous'), complete: !!doc.paths?.['/v1/telemetry/flows/complete'], views: !!doc.paths?.['/v1/views'] };
    },
    () => ({ unit: false, previous: false, complete: false, views: false }),
  );
  return features;
}

export interface Window {
  from: number;
  to: number;
}

export const windowOf = (range: string, now = Date.now()): Window => ({ from: now - (ranges[range]?.ms ?? 3_600_000), to: now });

export type Row = Record<string, string | number | boolean | null>;
export interface Point {
  t: string;
  bytes: number;
  packets: number;
  flows?: number;
  bps?: number;
  pps?: number;
}
export interface SeriesAnswer {
  step: number;
  series: { key: Row | null; points: Point[]; previous?: Point[] }[];
  previous?: { series?: { key: Row | null; points: Point[] }[] } | { key: Row | null; points: Point[] }[] | Point[];
}
export interface TopAnswer {
  data: Row[];
}

/** The query string of a top-N or series read of `state` (reversed for the other direction). */
export function queryOf(kind: 'top' | 'series', state: VisualizeState, window: Window, f: Features, reverse = false, limit = 10): string {
  const by = reverse ? state.by.map(reverseDimension) : state.by;
  const q = new URLSearchParams({ from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString(), limit: String(limit) });
  const filter = reverse ? reverseFilter(state.filter) : state.filter;
  if (filter.trim()) q.set('filter', filter);
  if (kind === 'top') {
    q.set('by', by.join(','));
    q.set('metric', state.unit);
    q.set('totals', 'all');
  } else {
    q.set('split_by', by[0]!);
  }
  if (f.unit) q.set('unit', state.unit);
  return `/v1/telemetry/flows/${kind}?${q.toString()}`;
}

/** A point's rate per second in `unit`. */
export function rateOf(p: Point, unit: Unit, step: number): number {
  if (unit === 'bytes') return p.bytes / step;
  if (unit === 'packets') return p.packets / step;
  return (p.flows ?? 0) / step;
}

/** A top row's rate per second over the window. */
export const rowRate = (row: Row, unit: Unit, window: Window) => Number(row[unit] ?? 0) / ((window.to - window.from) / 1000);

/** The previous period's total per step, aligned to the current steps, from whichever form the answer gave it in. */
function previousTotals(answer: SeriesAnswer): Point[][] | undefined {
  const inSeries = answer.series.map((s) => s.previous).filter((p): p is Point[] => Array.isArray(p));
  if (inSeries.length) return inSeries;
  const prev = answer.previous;
  if (!prev) return undefined;
  if (Array.isArray(prev)) return prev.length && 'points' in (prev[0] as object) ? (prev as { points: Point[] }[]).map((s) => s.points) : [prev as Point[]];
  return prev.series?.map((s) => s.points);
}

export interface SeriesData {
  step: number;
  times: string[];
  lines: { label: string; values: number[]; reverse?: boolean; previous?: boolean }[];
}

const keyLabel = (key: Row | null) => (key ? ('other' in key ? 'other' : Object.values(key).map((v) => (v === null || v === '' ? '(none)' : String(v))).join(' ')) : 'all');

function sumSteps(sets: Point[][], count: number, unit: Unit, step: number): number[] {
  const out = new Array<number>(count).fill(0);
  for (const points of sets) points.forEach((p, i) => { if (i < count) out[i] = (out[i] ?? 0) + rateOf(p, unit, step); });
  return out;
}

/** The series of a state: the current direction, its previous period (one total line) and the reverse direction, as chart lines. */
export async function loadSeries(state: VisualizeState, window: Window, f: Features): Promise<SeriesData> {
  const url = queryOf('series', state, window, f);
  const current = await request<SeriesAnswer>('GET', state.previous && f.previous ? `${url}&previous=true` : url);
  const times = (current.series[0]?.points ?? []).map((p) => p.t);
  const lines: SeriesData['lines'] = current.series.map((s) => ({ label: keyLabel(s.key), values: s.points.map((p) => rateOf(p, state.unit, current.step)) }));
  if (state.previous) {
    let sets = f.previous ? previousTotals(current) : undefined;
    if (!sets) {
      const span = window.to - window.from;
      const before = await request<SeriesAnswer>('GET', `${queryOf('series', state, { from: window.from - span, to: window.to - span }, f)}&step=${current.step}`);
      sets = before.series.map((s) => s.points);
    }
    lines.push({ label: 'previous period', values: sumSteps(sets, times.length, state.unit, current.step), previous: true });
  }
  if (state.bidirectional) {
    const reverse = await request<SeriesAnswer>('GET', `${queryOf('series', state, window, f, true)}&step=${current.step}`);
    for (const s of reverse.series) lines.push({ label: `${keyLabel(s.key)} (reverse)`, values: s.points.map((p) => -rateOf(p, state.unit, current.step)), reverse: true });
  }
  return { step: current.step, times, lines };
}

export interface TopData {
  rows: Row[];
  reverse?: Row[];
  /** Each row's previous-period value of the unit, by the row's key. */
  previous?: Map<string, number>;
}

export const rowKey = (row: Row, by: readonly string[]) => JSON.stringify(by.map((d) => row[d] ?? null));

/** The top rows of a state (and of the reverse direction, and the previous period's values for the same keys). */
export async function loadTop(state: VisualizeState, window: Window, f: Features): Promise<TopData> {
  const url = queryOf('top', state, window, f);
  const current = await request<TopAnswer>('GET', state.previous && f.previous ? `${url}&previous=true` : url);
  const out: TopData = { rows: current.data };
  if (state.previous) {
    const given = current.data.every((r) => typeof r[`previous_${state.unit}`] === 'number' || typeof r.previous === 'number');
    let rows = current.data;
    if (!f.previous || !given) {
      const span = window.to - window.from;
      rows = (await request<TopAnswer>('GET', queryOf('top', state, { from: window.from - span, to: window.to - span }, f, false, 1000))).data;
    }
    out.previous = new Map(rows.map((r) => [rowKey(r, state.by), Number(r[`previous_${state.unit}`] ?? (typeof r.previous === 'number' ? r.previous : r[state.unit]) ?? 0)]));
  }
  if (state.bidirectional) out.reverse = (await request<TopAnswer>('GET', queryOf('top', state, window, f, true))).data;
  return out;
}
