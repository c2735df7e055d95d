import { coarsestOf, flowResolutions, metricResolutions, planSegments, seriesResolution, type Resolution, type Segment } from '../../core/resolution';
import { seededRandom } from '../support/malformed';

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
/** 2024-03-05T10:00:00Z, an hour boundary. */
const h10 = Date.UTC(2024, 2, 5, 10);
const at = (h: number, m = 0, s = 0) => h10 + (h - 10) * hour + m * minute + s * second;
const sizeOf: Record<Resolution, number> = { '1h': hour, '5m': 5 * minute, '1m': minute, raw: 1 };
const coarserThan: Record<Resolution, Resolution[]> = { raw: ['1m', '5m', '1h'], '1m': ['5m', '1h'], '5m': ['1h'], '1h': [] };

/** A range over three days from 10:00: some start before it, a third are under two minutes, the rest up to 40 hours. */
function randomRange(rand: () => number, i: number): { from: number; to: number } {
  const from = h10 + Math.floor(rand() * 3 * 24 * hour) - (i % 2) * Math.floor(rand() * hour);
  return { from, to: from + 1 + Math.floor(rand() * (i % 3 === 0 ? 2 * minute : 40 * hour)) };
}

describe('planSegments', () => {
  test('an hour-aligned range is one segment of the hourly rollup', () => {
    expect(planSegments({ from: at(10), to: at(13) }, flowResolutions)).toEqual([{ from: at(10), to: at(13), resolution: '1h' }]);
  });

  test('an unaligned range takes whole hours from 1h, whole 5 minutes and minutes around them, and its unaligned edges from raw', () => {
    expect(planSegments({ from: at(10, 3, 17), to: at(12, 48, 41) }, flowResolutions)).toEqual([
      { from: at(10, 3, 17), to: at(10, 4), resolution: 'raw' },
      { from: at(10, 4), to: at(10, 5), resolution: '1m' },
      { from: at(10, 5), to: at(11), resolution: '5m' },
      { from: at(11), to: at(12), resolution: '1h' },
      { from: at(12), to: at(12, 45), resolution: '5m' },
      { from: at(12, 45), to: at(12, 48), resolution: '1m' },
      { from: at(12, 48), to: at(12, 48, 41), resolution: 'raw' },
    ]);
  });

  test('a range shorter than a minute is answered from raw alone', () => {
    expect(planSegments({ from: at(10, 30, 5), to: at(10, 30, 50) }, flowResolutions)).toEqual([{ from: at(10, 30, 5), to: at(10, 30, 50), resolution: 'raw' }]);
  });

  test('a range shorter than a minute that crosses a minute boundary is still one raw segment', () => {
    expect(planSegments({ from: at(10, 30, 50), to: at(10, 31, 10) }, flowResolutions)).toEqual([{ from: at(10, 30, 50), to: at(10, 31, 10), resolution: 'raw' }]);
  });

  test('empty pieces are omitted: a range aligned on one side has segments only on the other', () => {
    expect(planSegments({ from: at(11), to: at(12, 7, 30) }, flowResolutions)).toEqual([
      { from: at(11), to: at(12), resolution: '1h' },
      { from: at(12), to: at(12, 5), resolution: '5m' },
      { from: at(12, 5), to: at(12, 7), resolution: '1m' },
      { from: at(12, 7), to: at(12, 7, 30), resolution: 'raw' },
    ]);
  });

  test('a range within one hour takes no hourly segment', () => {
    expect(planSegments({ from: at(10, 10), to: at(10, 50) }, flowResolutions)).toEqual([{ from: at(10, 10), to: at(10, 50), resolution: '5m' }]);
  });

  test('an empty range has no segment', () => {
    expect(planSegments({ from: at(11), to: at(11) }, flowResolutions)).toEqual([]);
  });

  test('without raw rows an unaligned range widens to the minutes that hold its ends', () => {
    expect(planSegments({ from: at(10, 3, 17), to: at(10, 48, 41) }, metricResolutions)).toEqual([
      { from: at(10, 3), to: at(10, 5), resolution: '1m' },
      { from: at(10, 5), to: at(10, 45), resolution: '5m' },
      { from: at(10, 45), to: at(10, 49), resolution: '1m' },
    ]);
  });

  test('a time that is not whole epoch milliseconds is refused', () => {
    expect(() => planSegments({ from: 0.5, to: hour }, flowResolutions)).toThrow(RangeError);
  });

  test('the segments of any range cover it exactly, in order, without overlap, each aligned to its bucket', () => {
    const rand = seededRandom(20240305);
    const problems: string[] = [];
    for (let i = 0; i < 5000; i += 1) {
      const { from, to } = randomRange(rand, i);
      const segments = planSegments({ from, to }, flowResolutions);
      const fits = (s: Segment, j: number) =>
        s.from < s.to && s.from === (segments[j - 1]?.to ?? from) && s.from % sizeOf[s.resolution] === 0 && s.to % sizeOf[s.resolution] === 0;
      if (!segments.every(fits) || segments[segments.length - 1]?.to !== to) problems.push(`[${from}, ${to})`);
    }
    expect(problems).toEqual([]);
  });

  test('no segment of any range holds a whole bucket of a coarser resolution, so no plan reads fewer rows', () => {
    const rand = seededRandom(7);
    const problems: string[] = [];
    for (let i = 0; i < 5000; i += 1) {
      const { from, to } = randomRange(rand, i);
      const holdsCoarser = (s: Segment) =>
        coarserThan[s.resolution].some((c) => Math.ceil(s.from / sizeOf[c]) * sizeOf[c] + sizeOf[c] <= s.to);
      if (planSegments({ from, to }, flowResolutions).some(holdsCoarser)) problems.push(`[${from}, ${to})`);
    }
    expect(problems).toEqual([]);
  });
});

describe('planSegments with pending buckets', () => {
  test('a pending 5-minute bucket is read from the minutes, the folded ones beside it from the 5-minute level', () => {
    expect(planSegments({ from: at(10, 10), to: at(10, 50) }, flowResolutions, new Set([at(10, 20)]))).toEqual([
      { from: at(10, 10), to: at(10, 20), resolution: '5m' },
      { from: at(10, 20), to: at(10, 25), resolution: '1m' },
      { from: at(10, 25), to: at(10, 50), resolution: '5m' },
    ]);
  });

  test('an hour that holds a pending 5-minute bucket is read from its 5-minute buckets and that bucket\'s minutes', () => {
    expect(planSegments({ from: at(10), to: at(13) }, flowResolutions, new Set([at(11, 55)]))).toEqual([
      { from: at(10), to: at(11), resolution: '1h' },
      { from: at(11), to: at(11, 55), resolution: '5m' },
      { from: at(11, 55), to: at(12), resolution: '1m' },
      { from: at(12), to: at(13), resolution: '1h' },
    ]);
  });

  test('pending buckets outside the range change nothing', () => {
    const range = { from: at(10), to: at(13) };
    expect(planSegments(range, flowResolutions, new Set([at(9, 55), at(13)]))).toEqual(planSegments(range, flowResolutions));
  });

  test('with any pending buckets the segments still cover the range exactly, and none of a folded level holds a pending bucket', () => {
    const rand = seededRandom(42);
    const problems: string[] = [];
    for (let i = 0; i < 3000; i += 1) {
      const { from, to } = randomRange(rand, i);
      const pending = new Set(Array.from({ length: 1 + Math.floor(rand() * 6) }, () => Math.floor((from + rand() * (to - from)) / (5 * minute)) * 5 * minute));
      const segments = planSegments({ from, to }, flowResolutions, pending);
      const covers = segments.every((s, j) => s.from < s.to && s.from === (segments[j - 1]?.to ?? from)) && segments[segments.length - 1]?.to === to;
      const readsPending = segments.some((s) => (s.resolution === '5m' || s.resolution === '1h') && [...pending].some((p) => p >= s.from && p < s.to));
      if (!covers || readsPending) problems.push(`[${from}, ${to})`);
    }
    expect(problems).toEqual([]);
  });
});

describe('coarsestOf', () => {
  test('names the coarsest resolution among the segments', () => {
    expect(coarsestOf(planSegments({ from: at(10, 3, 17), to: at(12, 48, 41) }, flowResolutions))).toBe('1h');
    expect(coarsestOf(planSegments({ from: at(10, 3, 17), to: at(10, 5, 1) }, flowResolutions))).toBe('1m');
    expect(coarsestOf(planSegments({ from: at(10, 3, 17), to: at(10, 4, 1) }, flowResolutions))).toBe('raw');
  });
});

describe('seriesResolution', () => {
  test('a step and range of whole hours read the hourly rollup', () => {
    expect(seriesResolution(hour, { from: at(10), to: at(13) })).toBe('1h');
  });

  test('a step of whole hours over a range that starts at 5 minutes past reads the 5-minute rollup', () => {
    expect(seriesResolution(hour, { from: at(10, 5), to: at(13) })).toBe('5m');
  });

  test('a step of 5 minutes over an hour-aligned range reads the 5-minute rollup', () => {
    expect(seriesResolution(5 * minute, { from: at(10), to: at(13) })).toBe('5m');
  });

  test('a step of one minute reads the 1-minute rollup', () => {
    expect(seriesResolution(minute, { from: at(10), to: at(13) })).toBe('1m');
  });

  test('a range that is not of whole minutes reads the 1-minute rollup, whatever the step', () => {
    expect(seriesResolution(hour, { from: at(10, 0, 30), to: at(13) })).toBe('1m');
  });
});
