import type { Context } from 'koa';
import { Registry } from 'prom-client';
import { errorMiddleware } from '../../api/error-middleware';
import { httpMetrics } from '../../api/http-metrics';
import { auditVerifyCost, queryCost } from '../../core/query-cost';
import { maxReplayWindowMinutes, windowOverCap } from '../../core/replay';
import { refundToLevel, takeFromLevel, type BucketLevel } from '../../core/token-bucket';
import { createLogger } from '../../observability/logger';
import { ClickHouseError } from '../../storage/clickhouse';
import { limitSettings } from '../../storage/query-limits';

/** Analysts' query limits, as pure code: the SETTINGS clause, the 422 of each engine code, costs, the budget, the replay cap. */
const limits = { maxExecutionSeconds: 30, maxMemoryBytes: 512 * 1024 ** 2, maxRowsToRead: 5_000_000 };

/** What the error middleware answers when the next middleware throws `err`. */
async function answerTo(err: unknown) {
  const headers: Record<string, string> = {};
  const ctx = { method: 'GET', path: '/v1/telemetry/flows/top', status: 200, body: undefined as unknown, set: (h: string, v: string) => (headers[h] = v) };
  const handle = errorMiddleware({ log: createLogger('silent'), metrics: httpMetrics(new Registry()), queryLimits: limits });
  await handle(ctx as unknown as Context, () => Promise.reject(err instanceof Error ? err : new Error(String(err))));
  return { status: ctx.status, body: ctx.body as { error: { code: string; message: string } }, headers };
}

describe('query limits', () => {
  test('the SETTINGS clause sets the three limits by the names both generations know', () => {
    expect(limitSettings(limits)).toBe(' SETTINGS max_execution_time = 30, max_memory_usage = 536870912, max_rows_to_read = 5000000');
  });

  test.each([
    [158, 'max_rows_to_read: 5,000,000 rows'],
    [159, 'max_execution_time: 30 seconds'],
    [160, 'max_execution_time: 30 seconds'],
    [241, 'max_memory_usage: 512 MiB'],
    [307, '(max_bytes_to_read)'],
  ])('ClickHouse error %i is 422 QUERY_TOO_EXPENSIVE naming %s, never a 500', async (code, named) => {
    const answer = await answerTo(new ClickHouseError(`clickhouse query failed: Code: ${code}. DB::Exception: secret detail`, code));
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('QUERY_TOO_EXPENSIVE');
    expect(answer.body.error.message).toContain(named);
    expect(answer.body.error.message).not.toContain('secret detail');
  });

  test('another ClickHouse error stays a 500 INTERNAL', async () => {
    expect((await answerTo(new ClickHouseError('clickhouse query failed: Code: 62. Syntax error', 62))).status).toBe(500);
  });

  test('a query on the rollups costs one unit; one on the raw flows one more and one per six hours started', () => {
    const day = 86_400_000;
    expect(queryCost('dst', { from: 0, to: 31 * day })).toBe(1);
    expect(queryCost('metrics', { from: 0, to: 31 * day })).toBe(1);
    expect(queryCost('raw', { from: 0, to: 3_600_000 })).toBe(2);
    expect(queryCost('raw', { from: 0, to: day })).toBe(5);
    expect(queryCost('raw', { from: 0, to: 7 * day })).toBe(29);
    expect([auditVerifyCost(0), auditVerifyCost(3), auditVerifyCost(50_000)]).toEqual([1, 2, 6]);
  });

  test("a workspace's stored budget refuses with the time until it refills, and gives back what was refunded", () => {
    const budget = { ratePerSecond: 1, capacity: 5 };
    const taken = (level: BucketLevel | undefined, n: number, now: number) => {
      const result = takeFromLevel(level, n, now, budget);
      if (!result.ok) throw new Error(`refused for ${result.retryAfterMs} ms`);
      return result.level;
    };
    const spent = taken(undefined, 5, 0);
    expect(takeFromLevel(spent, 2, 0, budget)).toEqual({ ok: false, retryAfterMs: 2000 });
    const refunded = refundToLevel(spent, 2, 0, budget);
    expect(taken(refunded, 2, 0)).toEqual({ tokens: 0, at: 0 });
    expect(taken(spent, 3, 3_000)).toEqual({ tokens: 0, at: 3_000 });
    // More than the capacity passes on a full bucket and leaves it in debt; a clock behind the stored instant refills nothing.
    expect(taken(undefined, 9, 0)).toEqual({ tokens: -4, at: 0 });
    expect(takeFromLevel({ tokens: 0, at: 10_000 }, 1, 5_000, budget)).toEqual({ ok: false, retryAfterMs: 1000 });
  });

  test('a replay window over the cap is refused, requested or by default, and the cap itself is allowed', () => {
    const window = (minutes: number) => ({ from: 0, to: minutes * 60_000, window_minutes: minutes });
    expect(windowOverCap(window(60), 60, 60)).toBeUndefined();
    expect(windowOverCap(window(61), 61, 60)).toContain('at most 60 (REPLAY_MAX_WINDOW_MINUTES)');
    expect(windowOverCap(window(2000), undefined, 1440)).toContain('ask for window_minutes of at most 1440');
    expect(maxReplayWindowMinutes).toBe(43_200);
  });
});
