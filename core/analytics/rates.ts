import { seriesPoints, type StepVolume } from '../flow-query';

/**
 * Units and the previous period of the analysts' top-N and series (issue
 * 34): a rate per second in bytes, packets or flows (`unit`), and the same
 * query over the range just before (`previous`), aligned step by step with
 * the current one. Pure: volumes in, the points the API answers out.
 */
export const flowUnits = ['bytes', 'packets', 'flows'] as const;
export type FlowUnit = (typeof flowUnits)[number];

/** A step's volumes, flows included (the rollups keep a flow count per row). */
export interface StepTotals extends StepVolume {
  flows: number;
}

export interface RatePoint {
  t: number;
  bps: number;
  pps: number;
  fps: number;
  bytes: number;
  packets: number;
  flows: number;
  /** The asked unit per second: bytes/s, packets/s or flows/s. */
  rate: number;
}

export interface TimeSpan {
  from: number;
  to: number;
}

/** The previous period: the same length, ending where the range starts. */
export const previousRange = (range: TimeSpan): TimeSpan => ({ from: 2 * range.from - range.to, to: range.from });

/** One point per step of the range (zeros where nothing flowed): bits, packets and flows per second, the volumes, and the unit's rate. */
export function ratePoints(range: TimeSpan, stepMs: number, volumes: readonly StepTotals[], unit: FlowUnit): RatePoint[] {
  const flowsAt = new Map(volumes.map((v) => [v.t, v.flows]));
  const seconds = stepMs / 1000;
  return seriesPoints(range, stepMs, volumes).map((p) => {
    const flows = flowsAt.get(p.t) ?? 0;
    const point = { ...p, fps: flows / seconds, flows };
    return { ...point, rate: point[unit] / seconds };
  });
}

/**
 * The previous period's points laid on the current steps: the i-th step of
 * the previous range beside the i-th of the current one (`t` the current
 * step's, `t_previous` its own). A range whose length is not a whole number
 * of steps may cover one step more or less than its predecessor: a missing
 * step is zero, a surplus one is dropped.
 */
export function alignedPrevious(current: readonly RatePoint[], previous: readonly RatePoint[], range: TimeSpan, stepMs: number) {
  const before = previousRange(range);
  const firstPrevious = Math.floor(before.from / stepMs) * stepMs;
  return current.map((c, i) => {
    const p = previous[i];
    const t = firstPrevious + i * stepMs;
    const zero = { bps: 0, pps: 0, fps: 0, bytes: 0, packets: 0, flows: 0, rate: 0 };
    return { ...(p ?? zero), t: c.t, t_previous: t };
  });
}

/** A total over a range as a rate per second of the range. */
export const ratePerSecond = (total: number, range: TimeSpan): number => total / ((range.to - range.from) / 1000);
