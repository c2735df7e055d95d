import { expiredPartitions } from '../../storage/retention-job';

describe('retention', () => {
  const day = 86_400_000;
  const today = 20_000;
  const now = today * day + 5_000;

  test('partitions older than the retention expire and today and the kept days stay', () => {
    const partitions = [String(today), String(today - 29), String(today - 30), String(today - 400)];
    expect(expiredPartitions(partitions, now, 30)).toEqual([String(today - 30), String(today - 400)]);
  });

  test('a partition that is not a day number is never dropped', () => {
    expect(expiredPartitions(['tuple()', 'all', ''], now, 1)).toEqual([]);
  });
});
