import { z } from 'zod';
import { rawRangeDays, rollupRangeDays } from '../core/flow-query';
import { maxReplayWindowMinutes } from '../core/replay';
import { defineSettings, integer, setting } from '../core/settings';
import { defaultQueryLimits, type QueryLimits } from '../storage/query-limits';

/** What one workspace or key may ask of the API: records a second, the cost of its queries, their ranges, a replay's window. */
export const limitsSettings = defineSettings(
  'Limits of the API',
  {
    RATE_LIMIT_RECORDS_PER_SECOND: setting(
      z.coerce.number().min(0).default(0),
      'telemetry records one workspace may post per second through one API process; over it, 429 `RATE_LIMITED` with `Retry-After`. `0`: no limit',
    ),
    RATE_LIMIT_BURST_SECONDS: setting(
      z.coerce.number().positive().max(3600).default(2),
      "seconds of that rate a workspace may post at once; a larger batch passes when its workspace's allowance is full, and delays the next",
    ),
    ANALYTICS_MAX_EXECUTION_SECONDS: setting(
      integer(0, 3600).default(defaultQueryLimits.maxExecutionSeconds),
      'ClickHouse limit on the seconds every analyst query may run; past it, 422 `QUERY_TOO_EXPENSIVE` naming it ([security/limits.md](security/limits.md))',
    ),
    ANALYTICS_MAX_MEMORY_BYTES: setting(integer(0).default(defaultQueryLimits.maxMemoryBytes), 'ClickHouse limit on the memory every analyst query may use; past it, 422 `QUERY_TOO_EXPENSIVE` naming it'),
    ANALYTICS_MAX_ROWS_TO_READ: setting(integer(0).default(defaultQueryLimits.maxRowsToRead), 'ClickHouse limit on the rows every analyst query may read; past it, 422 `QUERY_TOO_EXPENSIVE` naming it'),
    ANALYTICS_MAX_RANGE_DAYS: setting(integer(1, 366).default(rollupRangeDays), 'the longest range of an analyst query on the rollups, in days'),
    ANALYTICS_MAX_RAW_RANGE_DAYS: setting(integer(1, 31).default(rawRangeDays), 'the longest range of an analyst query on the raw flows, in days'),
    QUERY_BUDGET_UNITS_PER_MINUTE: setting(
      z.coerce.number().min(0).default(600),
      'cost units a workspace (all its keys and sessions, on every API process) may spend a minute on analyst queries and audit verification; past them, 429 with `Retry-After`; 0: no budget ([security/limits.md](security/limits.md))',
    ),
    QUERY_BUDGET_BURST_UNITS: setting(
      z.coerce.number().min(1).default(300),
      'cost units a workspace may spend at once on analyst queries and audit verification',
    ),
    AUDIT_VERIFY_MAX_ENTRIES: setting(integer(1, 1_000_000).default(50_000), 'entries one call of `/v1/audit/verify` checks; the rest by its `next_cursor`'),
    REPLAY_MAX_WINDOW_MINUTES: setting(integer(1, maxReplayWindowMinutes).default(1440), 'the longest window a replay may run on; past it, 400 naming the cap'),
  },
  (e) => ({
    rateLimit: { recordsPerSecond: e.RATE_LIMIT_RECORDS_PER_SECOND, burstSeconds: e.RATE_LIMIT_BURST_SECONDS },
    /** Analysts' queries: the engine limits each runs under, and the longest range (days) on rollups and on the raw flows. */
    analytics: {
      limits: { maxExecutionSeconds: e.ANALYTICS_MAX_EXECUTION_SECONDS, maxMemoryBytes: e.ANALYTICS_MAX_MEMORY_BYTES, maxRowsToRead: e.ANALYTICS_MAX_ROWS_TO_READ } satisfies QueryLimits,
      maxRangeDays: e.ANALYTICS_MAX_RANGE_DAYS,
      maxRawRangeDays: e.ANALYTICS_MAX_RAW_RANGE_DAYS,
    },
    /** Cost units (core/query-cost.ts) each workspace may spend a minute on analysts' queries and audit verification, and at once. */
    queryBudget: { unitsPerMinute: e.QUERY_BUDGET_UNITS_PER_MINUTE, burstUnits: e.QUERY_BUDGET_BURST_UNITS },
    /** Entries one call of /v1/audit/verify checks at most; the rest by its cursor. */
    auditVerify: { maxEntries: e.AUDIT_VERIFY_MAX_ENTRIES },
    /** The longest window a replay may run on. */
    replays: { maxWindowMinutes: e.REPLAY_MAX_WINDOW_MINUTES },
  }),
);
