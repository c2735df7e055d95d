import { alignedPrevious, previousRange, ratePerSecond, ratePoints } from '../../core/analytics/rates';

const minute = 60_000;

describe('rates and the previous period of analysts\' answers', () => {
  test('the previous period is as long as the range and ends where it starts', () => {
    expect(previousRange({ from: 10 * minute, to: 25 * minute })).toEqual({ from: -5 * minute, to: 10 * minute });
  });

  test('a point gives flows per second and the asked unit per second beside bits and packets per second', () => {
    const [point] = ratePoints({ from: 0, to: minute }, minute, [{ t: 0, bytes: 600, packets: 120, flows: 30 }], 'flows');
    expect(point).toEqual({ t: 0, bps: 80, pps: 2, fps: 0.5, bytes: 600, packets: 120, flows: 30, rate: 0.5 });
  });

  test('previous points lie on the current steps, a surplus previous step dropped', () => {
    // 1.7 steps long: the range covers 2 steps, its predecessor 3 (it starts mid-step).
    const range = { from: 10.2 * minute, to: 11.9 * minute };
    const before = ratePoints(previousRange(range), minute, [{ t: 8 * minute, bytes: 60, packets: 1, flows: 1 }], 'bytes');
    expect(before).toHaveLength(3);
    const aligned = alignedPrevious(ratePoints(range, minute, [], 'bytes'), before, range, minute);
    expect(aligned.map((p) => [p.t, p.t_previous, p.bytes])).toEqual([
      [10 * minute, 8 * minute, 60],
      [11 * minute, 9 * minute, 0],
    ]);
  });

  test('previous points lie on the current steps, a missing previous step zero', () => {
    // 1.2 steps long: the range covers 3 steps, its predecessor 2.
    const range = { from: 10.9 * minute, to: 12.1 * minute };
    const before = ratePoints(previousRange(range), minute, [{ t: 10 * minute, bytes: 60, packets: 1, flows: 1 }], 'bytes');
    expect(before).toHaveLength(2);
    const aligned = alignedPrevious(ratePoints(range, minute, [], 'bytes'), before, range, minute);
    expect(aligned.map((p) => [p.t, p.t_previous, p.bytes, p.rate])).toEqual([
      [10 * minute, 9 * minute, 0, 0],
      [11 * minute, 10 * minute, 60, 1],
      [12 * minute, 11 * minute, 0, 0],
    ]);
  });

  test('a total over a range is a rate per second of the range', () => {
    expect(ratePerSecond(1200, { from: 0, to: 20 * minute })).toBe(1);
  });
});
