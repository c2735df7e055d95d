/**
 * The visualize page's state, and its two written forms: the URL
 * (`#/visualize?v=1&filter=…&by=…`) and the JSON a saved view keeps
 * (`{v:1, filter, by, chart, unit, range, previous, bidirectional}`).
 *
 * The rule that keeps old links and saved views working (docs/console.md,
 * "Visualize"): every written state names its version `v`; a state without
 * `v` is version 1; the reader upgrades each older version to the current
 * one, one step at a time, and never drops a version's reader; a field it
 * cannot read (an unknown chart, a dimension the catalog no longer has)
 * falls back to its default instead of failing the whole view; a version
 * newer than this console's is refused with a note, the defaults shown.
 */
export const stateVersion = 1;

export const charts = ['stacked', 'lines', 'sankey', 'table'] as const;
export type Chart = (typeof charts)[number];
export const units = ['bytes', 'packets', 'flows'] as const;
export type Unit = (typeof units)[number];

/** Time ranges by their name: a relative range ending now. */
export const ranges: Readonly<Record<string, { label: string; ms: number }>> = {
  '15m': { label: 'last 15 minutes', ms: 900_000 },
  '1h': { label: 'last hour', ms: 3_600_000 },
  '6h': { label: 'last 6 hours', ms: 6 * 3_600_000 },
  '24h': { label: 'last 24 hours', ms: 86_400_000 },
  '7d': { label: 'last 7 days', ms: 7 * 86_400_000 },
};

export interface VisualizeState {
  v: typeof stateVersion;
  filter: string;
  /** One to three dimensions: the split of the time charts (the first), the columns of the table, the levels of the sankey. */
  by: string[];
  chart: Chart;
  unit: Unit;
  /** A name of `ranges`. */
  range: string;
  previous: boolean;
  bidirectional: boolean;
}

export const defaultState: VisualizeState = { v: 1, filter: '', by: ['dst_as'], chart: 'stacked', unit: 'bytes', range: '1h', previous: false, bidirectional: false };

const oneOf = <T extends string>(all: readonly T[], value: unknown, fallback: T): T => (all.includes(value as T) ? (value as T) : fallback);
const bool = (value: unknown) => value === true || value === 'true' || value === '1';

/** A state of any version this console knows, as the current version; `known` says which dimensions exist. */
export function readState(input: Record<string, unknown>, known: (dimension: string) => boolean): { state: VisualizeState; note?: string } {
  const version = input.v === undefined ? 1 : Number(input.v);
  if (!Number.isInteger(version) || version < 1) return { state: defaultState, note: `This view's version (${String(input.v)}) is not one this console reads: the defaults are shown.` };
  if (version > stateVersion) return { state: defaultState, note: `This view was written by a newer console (version ${version}): the defaults are shown.` };
  // Version 1 is the current one: a later version adds its upgrade step here (readV1 → upgradeV1toV2 → …).
  return { state: readV1(input, known) };
}

function readV1(input: Record<string, unknown>, known: (dimension: string) => boolean): VisualizeState {
  const rawBy = Array.isArray(input.by) ? input.by : typeof input.by === 'string' ? input.by.split(',') : [];
  const by = rawBy.map((d) => String(d).trim()).filter((d) => d !== '' && known(d)).slice(0, 3);
  return {
    v: 1,
    filter: typeof input.filter === 'string' ? input.filter : '',
    by: by.length ? [...new Set(by)] : defaultState.by,
    chart: oneOf(charts, input.chart, defaultState.chart),
    unit: oneOf(units, input.unit, defaultState.unit),
    range: typeof input.range === 'string' && input.range in ranges ? input.range : defaultState.range,
    previous: bool(input.previous),
    bidirectional: bool(input.bidirectional),
  };
}

/** The hash that reproduces a state: `#/visualize?v=1&…`, every field named. */
export function stateHash(state: VisualizeState): string {
  const q = new URLSearchParams({
    v: String(state.v),
    filter: state.filter,
    by: state.by.join(','),
    chart: state.chart,
    unit: state.unit,
    range: state.range,
    previous: state.previous ? '1' : '0',
    bidirectional: state.bidirectional ? '1' : '0',
  });
  return `#/visualize?${q.toString()}`;
}

/** The state a hash names, or undefined when the hash carries none (`#/visualize`). */
export function hashState(hash: string, known: (dimension: string) => boolean): { state: VisualizeState; note?: string } | undefined {
  const at = hash.indexOf('?');
  if (at < 0) return undefined;
  const q = new URLSearchParams(hash.slice(at + 1));
  return readState(Object.fromEntries(q.entries()), known);
}

/**
 * A saved view's state as the API keeps it (core/saved-views.ts, `v: 1`): the
 * dimensions under `dimensions`, the range as `{last_seconds}`. The page's
 * own fields map one to one; the API's `direction` (in, out of, or both ways
 * of the workspace's networks) and `limit` keep their defaults from here.
 */
export function toSavedState(state: VisualizeState): Record<string, unknown> {
  return {
    v: 1,
    filter: state.filter,
    dimensions: state.by,
    chart: state.chart,
    unit: state.unit,
    range: { last_seconds: (ranges[state.range] ?? ranges[defaultState.range]!).ms / 1000 },
    previous: state.previous,
    bidirectional: state.bidirectional,
  };
}

/** A saved view's state (any version this console reads) as the page's: a range the page does not offer becomes its default, as any field it cannot read. */
export function fromSavedState(saved: Record<string, unknown>, known: (dimension: string) => boolean): { state: VisualizeState; note?: string } {
  const range = saved.range as { last_seconds?: unknown } | undefined;
  const named = Object.entries(ranges).find(([, r]) => typeof range?.last_seconds === 'number' && r.ms === range.last_seconds * 1000)?.[0];
  return readState({ ...saved, by: saved.dimensions, range: named }, known);
}
