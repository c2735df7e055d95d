import { TokenBucket } from '../../core/token-bucket';

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
