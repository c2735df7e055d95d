import type { Context } from 'koa';
import { Registry } from 'prom-client';
import { errorMiddleware } from '../../api/error-middleware';
import { httpMetrics } from '../../api/http-metrics';
import { queryBudgetLimiter } from '../../application/rate-limiter';
import { auditVerifyCost, queryCost } from '../../core/query-cost';
import { maxReplayWindowMinutes, windowOverCap } from '../../core/replay';
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

  test('a query on the rollups costs one unit; one on the raw flows one more and four a started day', () => {
    const day = 86_400_000;
    expect(queryCost('dst', { from: 0, to: 31 * day })).toBe(1);
    expect(queryCost('metrics', { from: 0, to: 31 * day })).toBe(1);
    expect(queryCost('raw', { from: 0, to: 3_600_000 })).toBe(5);
    expect(queryCost('raw', { from: 0, to: 7 * day })).toBe(29);
    expect([auditVerifyCost(0), auditVerifyCost(3), auditVerifyCost(50_000)]).toEqual([1, 2, 6]);
  });

  test("a key's budget refuses with 429 and the seconds until it refills, and gives back what was refunded", () => {
    let now = 0;
    const budget = queryBudgetLimiter({ unitsPerMinute: 60, burstUnits: 5 }, new Registry(), () => now);
    budget.take('key_a', 5);
    expect(() => budget.take('key_a', 2)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfterSeconds: 2 }) as Error);
    budget.take('key_b', 5);
    budget.refund('key_a', 2);
    budget.take('key_a', 2);
    now = 3_000;
    budget.take('key_a', 3);
  });

  test('a replay window over the cap is refused, requested or by default, and the cap itself is allowed', () => {
    const window = (minutes: number) => ({ from: 0, to: minutes * 60_000, window_minutes: minutes });
    expect(windowOverCap(window(60), 60, 60)).toBeUndefined();
    expect(windowOverCap(window(61), 61, 60)).toContain('at most 60 (REPLAY_MAX_WINDOW_MINUTES)');
    expect(windowOverCap(window(2000), undefined, 1440)).toContain('ask for window_minutes of at most 1440');
    expect(maxReplayWindowMinutes).toBe(43_200);
  });
});
