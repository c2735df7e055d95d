import { Registry } from 'prom-client';
import { AuthThrottle } from '../../application/auth-throttle';
import { AppError } from '../../core/errors';
import { metricTotal } from '../support/metrics';

function throttleAt(failuresPerMinute: number) {
  const clock = { now: 0 };
  const registry = new Registry();
  return { throttle: new AuthThrottle({ failuresPerMinute }, registry, () => clock.now), clock, registry };
}

const refusal = (fn: () => void): AppError | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err as AppError;
  }
};

describe('the failed-authentication throttle', () => {
  test('lets an address fail its allowance, then refuses it with 429 and Retry-After', () => {
    const { throttle } = throttleAt(20);
    for (let i = 0; i < 20; i += 1) {
      throttle.check('192.0.2.1');
      throttle.recordFailure('192.0.2.1');
    }
    const err = refusal(() => throttle.check('192.0.2.1'));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 3 });
  });

  test('refuses only the address that failed', () => {
    const { throttle } = throttleAt(2);
    throttle.recordFailure('192.0.2.1');
    throttle.recordFailure('192.0.2.1');
    expect(refusal(() => throttle.check('192.0.2.2'))).toBeUndefined();
  });

  test('lets the address try again once a failure has refilled', () => {
    const { throttle, clock } = throttleAt(2);
    throttle.recordFailure('192.0.2.1');
    throttle.recordFailure('192.0.2.1');
    clock.now = 30_000;
    expect(refusal(() => throttle.check('192.0.2.1'))).toBeUndefined();
  });

  test('counts each refused request', async () => {
    const { throttle, registry } = throttleAt(1);
    throttle.recordFailure('192.0.2.1');
    refusal(() => throttle.check('192.0.2.1'));
    refusal(() => throttle.check('192.0.2.1'));
    expect(await metricTotal(registry, 'nettel_auth_throttled_requests_total')).toBe(2);
  });

  test('set to 0 never refuses', () => {
    const { throttle } = throttleAt(0);
    for (let i = 0; i < 100; i += 1) throttle.recordFailure('192.0.2.1');
    expect(refusal(() => throttle.check('192.0.2.1'))).toBeUndefined();
  });
});
