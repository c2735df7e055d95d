/**
 * Which stored resolution answers which part of a time range. Rollups hold
 * whole buckets (1 hour, 5 minutes, 1 minute) and each bucket size divides
 * the next coarser one, so the coarsest table answers the widest aligned
 * middle of a range, the finer ones its edges, and the raw rows (kept for
 * flows only) the part of an edge that is not a whole minute. Pure: times in
 * epoch milliseconds in, segments out.
 */
export type Resolution = '1h' | '5m' | '1m' | 'raw';
export type BucketResolution = Exclude<Resolution, 'raw'>;

/** The length of a rollup's bucket. */
export const bucketMs: Readonly<Record<BucketResolution, number>> = { '1h': 3_600_000, '5m': 300_000, '1m': 60_000 };

/** What flows and metric events are stored at. */
export const flowResolutions: readonly Resolution[] = ['1h', '5m', '1m', 'raw'];
export const metricResolutions: readonly Resolution[] = ['1h', '5m', '1m'];

export interface TimeSpan {
  /** Inclusive, epoch milliseconds. */
  from: number;
  /** Exclusive, epoch milliseconds. */
  to: number;
}

/** A part of a range and the resolution that answers it. */
export interface Segment extends TimeSpan {
  resolution: Resolution;
}

const coarseFirst: readonly BucketResolution[] = ['1h', '5m', '1m'];
const rank: Readonly<Record<Resolution, number>> = { raw: 0, '1m': 1, '5m': 2, '1h': 3 };

const floorTo = (ms: number, size: number) => Math.floor(ms / size) * size;
const ceilTo = (ms: number, size: number) => Math.ceil(ms / size) * size;

/**
 * Buckets of the folded levels (5 minutes and 1 hour) not to read: the
 * starts of the 5-minute buckets whose minutes are not folded into them yet
 * (storage/rollup-fold.ts). An hour is unread when any of its 5-minute
 * buckets is; the finer levels answer both.
 */
export type PendingBuckets = ReadonlySet<number>;

const foldedLevel = (r: BucketResolution) => r === '5m' || r === '1h';

/** The starts of the `size` buckets within `span` that hold a pending 5-minute bucket, in order. */
function unreadBuckets(span: TimeSpan, size: number, pending: PendingBuckets): number[] {
  const starts = new Set<number>();
  for (const p of pending) if (p >= span.from && p < span.to) starts.add(floorTo(p, size));
  return [...starts].sort((a, b) => a - b);
}

/** Segments of `span` in time order: the coarsest bucket's aligned middle, the edges from the finer resolutions. */
function cover(span: TimeSpan, buckets: readonly BucketResolution[], raw: boolean, pending: PendingBuckets): Segment[] {
  if (span.from >= span.to) return [];
  const [coarsest, ...finer] = buckets;
  if (!coarsest) return raw ? [{ ...span, resolution: 'raw' }] : [];
  const size = bucketMs[coarsest];
  const middle = { from: ceilTo(span.from, size), to: floorTo(span.to, size) };
  if (middle.from >= middle.to) return cover(span, finer, raw, pending);
  return [
    ...cover({ from: span.from, to: middle.from }, finer, raw, pending),
    ...readable(middle, coarsest, finer, raw, pending),
    ...cover({ from: middle.to, to: span.to }, finer, raw, pending),
  ];
}

/** An aligned middle at `level`, with the buckets that may not be read there answered by the finer levels. */
function readable(middle: TimeSpan, level: BucketResolution, finer: readonly BucketResolution[], raw: boolean, pending: PendingBuckets): Segment[] {
  const unread = foldedLevel(level) ? unreadBuckets(middle, bucketMs[level], pending) : [];
  const out: Segment[] = [];
  let from = middle.from;
  for (const start of unread) {
    if (start > from) out.push({ from, to: start, resolution: level });
    out.push(...cover({ from: start, to: start + bucketMs[level] }, finer, raw, pending));
    from = start + bucketMs[level];
  }
  if (from < middle.to) out.push({ from, to: middle.to, resolution: level });
  return out;
}

/**
 * The segments that answer `[from, to)` with the fewest rows, in time order,
 * from the resolutions `available`. With raw rows they cover the range
 * exactly, without overlap; without them an unaligned edge cannot be
 * answered exactly, and the range widens to the finest bucket holding it (the
 * segments say so). A folded level's bucket that is `pending` is answered
 * by the finer levels. An empty range has no segment.
 */
export function planSegments(range: TimeSpan, available: readonly Resolution[], pending: PendingBuckets = new Set()): Segment[] {
  if (!Number.isSafeInteger(range.from) || !Number.isSafeInteger(range.to)) {
    throw new RangeError(`not a range in epoch milliseconds: [${range.from}, ${range.to})`);
  }
  const buckets = coarseFirst.filter((r) => available.includes(r));
  const raw = available.includes('raw');
  const finest = buckets[buckets.length - 1];
  if (!raw && !finest) throw new RangeError('no resolution to answer from');
  const span = raw || !finest ? range : { from: floorTo(range.from, bucketMs[finest]), to: ceilTo(range.to, bucketMs[finest]) };
  return merged(cover(span, buckets, raw, pending));
}

/** Neighbouring segments of one resolution as one (pending buckets split a level's middle; their minutes join up). */
function merged(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (last && last.resolution === s.resolution && last.to === s.from) out[out.length - 1] = { ...last, to: s.to };
    else out.push(s);
  }
  return out;
}

/** The coarsest resolution among segments (raw when there is none). */
export function coarsestOf(segments: readonly Segment[]): Resolution {
  return segments.reduce<Resolution>((best, s) => (rank[s.resolution] > rank[best] ? s.resolution : best), 'raw');
}

/**
 * The rollup a series with this step reads: the coarsest whose bucket divides
 * the step and both ends of the range, so every step sums whole buckets;
 * otherwise the finest available (whose edges the caller widens to buckets).
 */
export function seriesResolution(stepMs: number, range: TimeSpan, available: readonly Resolution[] = metricResolutions): BucketResolution {
  const buckets = coarseFirst.filter((r) => available.includes(r));
  const divides = (r: BucketResolution) => [stepMs, range.from, range.to].every((ms) => ms % bucketMs[r] === 0);
  const chosen = buckets.find(divides) ?? buckets[buckets.length - 1];
  if (!chosen) throw new RangeError('no rollup to answer from');
  return chosen;
}
