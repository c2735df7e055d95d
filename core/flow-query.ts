import { validationError, type ErrorDetail } from './errors';
import { dimensionSpecs, flowDimensions, isFlowDimension, type DimensionSpec, type FlowDimension, type RollupFamily } from './flow-dimensions';
import { bucketMs, flowResolutions, type Resolution } from './resolution';
import { isAddressText, protocolSchema } from './telemetry';

/**
 * What analysts filter and group flows by, and where a query over them can
 * be answered. Pure: query text in, typed filters and plans out; storage
 * turns them into SQL. Addresses are compared as 16 bytes (IPv4 as
 * IPv4-mapped IPv6), so a filter is a list of address ranges whatever the
 * spelling the address was stored in. The dimensions themselves are the
 * catalog of core/flow-dimensions.ts.
 */
/** An inclusive range of addresses, each bound as eight groups of four hex digits (IPv4 in its mapped form). */
export interface AddressRange {
  first: string;
  last: string;
}

export type FlowFilter =
  | { dimension: FlowDimension; kind: 'address'; ranges: AddressRange[] }
  | { dimension: FlowDimension; kind: 'number'; values: number[] }
  | { dimension: FlowDimension; kind: 'protocol' | 'text'; values: string[] };

/** At most this many values in one filter parameter. */
export const maxFilterValues = 100;

function ipv4Octets(text: string): number[] {
  return text.split('.').map(Number);
}

/** The sixteen bytes of an address that passes isAddressText (IPv4 as ::ffff:a.b.c.d). */
export function addressBytes(text: string): number[] {
  if (!text.includes(':')) return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...ipv4Octets(text)];
  let rest = text;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(text.slice(lastColon + 1));
    tail.push((a << 8) | b, (c << 8) | d);
    rest = text[lastColon - 1] === ':' ? text.slice(0, lastColon + 1) : text.slice(0, lastColon);
  }
  const groupsOf = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const [head = '', after] = rest.split('::');
  const left = groupsOf(head);
  const right = after === undefined ? [] : groupsOf(after);
  const zeros = 8 - tail.length - left.length - right.length;
  const groups = [...left, ...Array<number>(Math.max(zeros, 0)).fill(0), ...right, ...tail];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

const groupsText = (bytes: readonly number[]) =>
  Array.from({ length: 8 }, (_, i) => (((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16).padStart(4, '0')).join(':');

/**
 * An exact address or a CIDR prefix (`10.0.0.0/8`, `2001:db8::/32`) as a
 * range; bits of the address beyond the prefix are ignored. Undefined when
 * the text is neither.
 */
export function parseAddressRange(text: string): AddressRange | undefined {
  const [address = '', prefix, extra] = text.split('/');
  if (extra !== undefined || !isAddressText(address)) return undefined;
  const v4 = !address.includes(':');
  const width = v4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  const length = prefix === undefined ? width : Number(prefix);
  if (length > width) return undefined;
  const keep = length + (128 - width);
  const bytes = addressBytes(address);
  const mask = (i: number) => (keep >= 8 * (i + 1) ? 0xff : keep <= 8 * i ? 0 : (0xff << (8 - (keep - 8 * i))) & 0xff);
  return {
    first: groupsText(bytes.map((b, i) => b & mask(i))),
    last: groupsText(bytes.map((b, i) => (b & mask(i)) | (~mask(i) & 0xff))),
  };
}

/** One value of a filter parameter, or the reason it is not one. */
function parseValue(spec: DimensionSpec, text: string): { value: AddressRange | number | string } | { error: string } {
  if (spec.kind === 'address') {
    const range = parseAddressRange(text);
    return range ? { value: range } : { error: `${JSON.stringify(text)} is not an IPv4 or IPv6 address or CIDR prefix` };
  }
  if (spec.kind === 'number') {
    const n = /^\d{1,15}$/.test(text) ? Number(text) : NaN;
    return n <= spec.max ? { value: n } : { error: `${JSON.stringify(text)} is not a whole number from 0 to ${spec.max}` };
  }
  if (spec.kind === 'text') {
    return spec.text?.pattern.test(text) ? { value: text } : { error: `${JSON.stringify(text)} is not ${spec.text?.describe ?? 'a label'}` };
  }
  const name = protocolSchema.safeParse(text);
  return name.success ? { value: name.data } : { error: `${JSON.stringify(text)} is not a protocol name (1-16 characters)` };
}

/** One filter parameter: a comma-separated list of values, any of which matches. */
function parseFilter(dimension: FlowDimension, text: string): FlowFilter | ErrorDetail {
  const spec = dimensionSpecs[dimension];
  const items = text.split(',').map((v) => v.trim());
  if (items.length > maxFilterValues) return { path: dimension, message: `at most ${maxFilterValues} values` };
  const values: Array<AddressRange | number | string> = [];
  for (const item of items) {
    if (!item) return { path: dimension, message: 'an empty value' };
    const parsed = parseValue(spec, item);
    if ('error' in parsed) return { path: dimension, message: parsed.error };
    values.push(parsed.value);
  }
  if (spec.kind === 'address') return { dimension, kind: 'address', ranges: values as AddressRange[] };
  if (spec.kind === 'number') return { dimension, kind: 'number', values: values as number[] };
  return { dimension, kind: spec.kind, values: [...new Set(values as string[])] };
}

/**
 * The filters among query parameters: one per dimension named, in the order
 * of flowDimensions. Parameters that name no dimension are left to the
 * caller. Any bad value is a validation error naming its parameter.
 */
export function parseFilters(params: Readonly<Record<string, string>>): FlowFilter[] {
  const filters: FlowFilter[] = [];
  const details: ErrorDetail[] = [];
  for (const dimension of flowDimensions) {
    const text = params[dimension];
    if (text === undefined) continue;
    const parsed = parseFilter(dimension, text);
    if ('dimension' in parsed) filters.push(parsed);
    else details.push(parsed);
  }
  if (details.length) throw validationError(`invalid filter: ${details.map((d) => d.path).join(', ')}`, details);
  return filters;
}

/** A list of distinct dimensions (`by`, `split_by`), at most `max` of them. */
export function parseDimensionList(text: string, param: string, max: number): FlowDimension[] {
  const names = text.split(',').map((v) => v.trim());
  const bad = (message: string) => validationError(`invalid ${param}`, [{ path: param, message }]);
  const unknown = names.find((n) => !isFlowDimension(n));
  if (unknown !== undefined) throw bad(`${JSON.stringify(unknown)} is not a dimension (one of ${flowDimensions.join(', ')})`);
  if (new Set(names).size !== names.length) throw bad('a dimension is named twice');
  if (names.length > max) throw bad(`at most ${max} dimension${max > 1 ? 's' : ''}`);
  return names as FlowDimension[];
}

/**
 * Where a query is answered: a rollup family, or the raw flows and the
 * dimensions that send it there (with `stepSeconds`, a series step that no
 * level of their rollup divides).
 */
export type FlowQueryPlan = { source: RollupFamily } | { source: 'raw'; because: string[]; stepSeconds?: number };

/** What the plan needs of a filter expression (core/analytics/filter/check.ts): its dimensions and the tables that answer it. */
export interface FilterNeeds {
  dimensions: readonly string[];
  tables: readonly string[];
}

const keptBy = (d: string) => (isFlowDimension(d) ? dimensionSpecs[d].families : undefined);

/** The rollup families, in the order a query tries them (a query on no dimension, or on protocol alone, reads the destination rollups). */
export const rollupFamilies: readonly RollupFamily[] = ['dst', 'src', 'dims'];

/**
 * The resolutions each family answers from: its rollups' levels and the raw
 * flows for the edges. The dimension rollups keep 5 minutes and hours
 * (folded from closed buckets, migration 0063, docs/enrichment.md), so a
 * dimension query's edges finer than 5 minutes, its buckets not folded yet,
 * and a series whose step is not whole 5 minutes read the raw flows.
 */
export const familyResolutions: Readonly<Record<RollupFamily, readonly Resolution[]>> = {
  dst: flowResolutions,
  src: flowResolutions,
  dims: ['1h', '5m', 'raw'],
};

/**
 * A rollup answers a query only when it answers every dimension the query
 * groups or filters on (and the filter expression's tables include it);
 * a query on no dimension reads the destination rollups.
 */
export function planFlowQuery(grouped: readonly FlowDimension[], filters: readonly FlowFilter[], expression?: FilterNeeds): FlowQueryPlan {
  const used = [...new Set([...grouped, ...filters.map((f) => f.dimension)])];
  for (const family of rollupFamilies) {
    if (used.every((d) => dimensionSpecs[d].families?.includes(family)) && (expression?.tables.includes(family) ?? true)) return { source: family };
  }
  const all = [...new Set([...used, ...(expression?.dimensions ?? [])])];
  const unkept = all.filter((d) => keptBy(d) === undefined);
  return { source: 'raw', because: unkept.length ? unkept : all };
}

/**
 * A series' plan: a rollup family none of whose levels divides the step
 * would read the raw flows over the whole range (the dimension rollups keep
 * whole 5 minutes and hours), so the series is planned on the raw flows, with their range
 * bound and cost. `dimensions`: those the series splits and filters by.
 */
export function seriesPlan(plan: FlowQueryPlan, stepSeconds: number, dimensions: readonly string[]): FlowQueryPlan {
  if (plan.source === 'raw') return plan;
  const levels = familyResolutions[plan.source].filter((r): r is Exclude<Resolution, 'raw'> => r !== 'raw');
  if (levels.some((r) => (stepSeconds * 1000) % bucketMs[r] === 0)) return plan;
  return { source: 'raw', because: [...new Set(dimensions)], stepSeconds };
}

/** Why a plan reads the raw flows, for an error that explains a range bound. */
export function rawReason(plan: FlowQueryPlan): string {
  if (plan.source !== 'raw') return '';
  const names = plan.because.join(', ');
  if (plan.stepSeconds !== undefined) return `the rollup of ${names} keeps buckets of 5 minutes at the finest, not steps of ${plan.stepSeconds / 60} minutes`;
  return plan.because.some((d) => keptBy(d) === undefined)
    ? `${names} ${plan.because.length > 1 ? 'are' : 'is'} kept by no rollup`
    : `${names} are kept together by no rollup`;
}

/** Range bounds, in days: what the raw flows answer, and what the rollups answer. */
export const rawRangeDays = 7;
export const rollupRangeDays = 31;

/** Series: at most this many points in an answer (steps × series), and this many steps when the step is left to the service. */
export const maxSeriesPoints = 10_000;
export const defaultSeriesSteps = 300;

/** How many steps a range covers: steps start at multiples of the step since the epoch, the first holds `from`. */
export function stepCount(range: { from: number; to: number }, stepMs: number): number {
  return range.from < range.to ? Math.floor((range.to - 1) / stepMs) - Math.floor(range.from / stepMs) + 1 : 0;
}

/** The start of every step a range covers (see stepCount). */
export function stepStarts(range: { from: number; to: number }, stepMs: number): number[] {
  const first = Math.floor(range.from / stepMs) * stepMs;
  return Array.from({ length: stepCount(range, stepMs) }, (_, i) => first + i * stepMs);
}

const niceSteps = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

/**
 * The step, in seconds, a series takes when none is asked: the smallest of
 * 1, 2, 5, 10, 15, 30 minutes, 1, 2, 3, 6, 12 hours or whole days that
 * covers the range in at most `maxSteps` steps (round steps read the coarser
 * rollups).
 */
export function defaultStep(range: { from: number; to: number }, maxSteps = defaultSeriesSteps): number {
  const fits = (seconds: number) => stepCount(range, seconds * 1000) <= maxSteps;
  const nice = niceSteps.find(fits);
  if (nice !== undefined) return nice;
  let days = 2;
  while (!fits(days * 86_400)) days += 1;
  return days * 86_400;
}

/** A point of a series: the step's start (epoch ms) and its volumes. */
export interface StepVolume {
  t: number;
  bytes: number;
  packets: number;
}

/** A series' points, one for every step of the range (zero where no flow fell), with bits and packets per second. */
export function seriesPoints(range: { from: number; to: number }, stepMs: number, volumes: readonly StepVolume[]) {
  const byStep = new Map(volumes.map((v) => [v.t, v]));
  const seconds = stepMs / 1000;
  return stepStarts(range, stepMs).map((t) => {
    const v = byStep.get(t);
    const bytes = v?.bytes ?? 0;
    const packets = v?.packets ?? 0;
    return { t, bps: (bytes * 8) / seconds, pps: packets / seconds, bytes, packets };
  });
}
