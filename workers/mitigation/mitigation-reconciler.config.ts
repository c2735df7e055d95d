import { defineSettings, integer, setting } from '../../core/settings';

/** How often the speaker is compared with the ledger, and the lease renewed: a route outlives its end by about this at most. */
export const reconcileIntervalMs = 1_000;

/**
 * How long the speaker's lease outlives its holder's last renewal. Five
 * intervals: a holder misses four renewals in a row before it loses the
 * lease, and a killed holder's routes past their end wait at most about
 * this plus an interval for another process (docs/operations/cluster.md).
 */
export const defaultLeaseTtlMs = 5 * reconcileIntervalMs;

/** The mitigation reconciler's lease on the BGP speaker: one reconciler per speaker at a time. */
export const mitigationReconcilerSettings = defineSettings(
  'The mitigation reconciler',
  {
    MITIGATION_LEASE_TTL_MS: setting(
      integer(3 * reconcileIntervalMs, 60_000).default(defaultLeaseTtlMs),
      "how long the lease on the BGP speaker outlives its holder's last renewal (renewed every second and before each change): only the holding temporal-worker changes the speaker, and a holder killed -9 delays the routes' changes by up to about this plus a second",
    ),
  },
  (e) => ({ mitigationReconciler: { leaseTtlMs: e.MITIGATION_LEASE_TTL_MS } }),
);
