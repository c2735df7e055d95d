import { TokenBucket, TokenBuckets } from '../../core/token-bucket';

describe('token bucket', () => {
  test('takes up to its capacity at once, then refuses with the wait until enough tokens', () => {
    const bucket = new TokenBucket(100, 200, 0);
    expect(bucket.take(150, 0)).toEqual({ ok: true });
    expect(bucket.take(100, 0)).toEqual({ ok: false, retryAfterMs: 500 });
  });

  test('refills at its rate, never beyond its capacity', () => {
    const bucket = new TokenBucket(100, 200, 0);
    bucket.take(200, 0);
    expect(bucket.take(100, 1000)).toEqual({ ok: true });
    expect(bucket.take(200, 60_000)).toEqual({ ok: true });
    expect(bucket.take(1, 60_000).ok).toBe(false);
  });

  test('a take larger than the capacity passes when the bucket is full and leaves it in debt', () => {
    const bucket = new TokenBucket(100, 200, 0);
    expect(bucket.take(1000, 0)).toEqual({ ok: true });
    expect(bucket.take(1, 1000)).toEqual({ ok: false, retryAfterMs: 7010 });
  });
});

describe('token bucket wait', () => {
  test('says how long until tokens could be taken, taking none', () => {
    const bucket = new TokenBucket(1, 2, 0);
    bucket.take(2, 0);
    expect(bucket.waitMs(1, 0)).toBe(1000);
    expect(bucket.waitMs(1, 0)).toBe(1000);
    expect(bucket.waitMs(1, 1000)).toBe(0);
  });
});

describe('token buckets by key', () => {
  test('gives each key a bucket of its own, created full', () => {
    const buckets = new TokenBuckets(1, 2, 10);
    buckets.get('a', 0).take(2, 0);
    expect(buckets.get('b', 0).take(2, 0)).toEqual({ ok: true });
    expect(buckets.get('a', 0).take(1, 0).ok).toBe(false);
  });

  test('a key never used has no bucket to peek at', () => {
    expect(new TokenBuckets(1, 2, 10).peek('a')).toBeUndefined();
  });

  test('past its bound drops the key used least recently and keeps the others', () => {
    const buckets = new TokenBuckets(1, 2, 2);
    buckets.get('a', 0).take(2, 0);
    buckets.get('b', 0).take(2, 0);
    buckets.get('a', 0);
    buckets.get('c', 0);
    expect(buckets.size).toBe(2);
    expect(buckets.peek('b')).toBeUndefined();
    expect(buckets.peek('a')?.waitMs(1, 0)).toBe(1000);
  });
});
