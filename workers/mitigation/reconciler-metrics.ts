import { counter, gauge, type Registry } from '../../observability/metrics';

/** What the mitigation reconciler counts (the lease's own counts are reconciler-lease.ts's). */
export const reconcilerMetrics = (registry: Registry) => ({
  changes: counter(registry, {
    name: 'nettel_mitigation_reconcile_changes_total',
    help: 'Routes the mitigation reconciler announced or withdrew to make the BGP speaker match the ledger, and neighbours it added again',
    labelNames: ['change'] as const,
  }),
  changeFailures: counter(registry, {
    name: 'nettel_mitigation_reconcile_change_failures_total',
    help: 'Announcements, withdrawals and neighbour additions the speaker refused or failed; the others of the pass are still made',
    labelNames: ['change'] as const,
  }),
  reconciles: counter(registry, { name: 'nettel_mitigation_reconciles_total', help: 'Reconciliations of the BGP speaker with the mitigation ledger that completed' }),
  failures: counter(registry, { name: 'nettel_mitigation_reconcile_failures_total', help: 'Reconciliations that failed (the speaker or the ledger unreachable); tried again at the next interval' }),
  unapproved: counter(registry, {
    name: 'nettel_mitigation_unapproved_withdrawals_total',
    help: 'Active mitigations the reconciler withdrew because their destination is no longer within a prefix approved for their workspace (revoked or removed)',
  }),
  unreadable: gauge(registry, { name: 'nettel_mitigation_ledger_unreadable_entries', help: 'Ledger entries that are not mitigations the speaker can express: never announced' }),
  refused: counter(registry, {
    name: 'nettel_mitigation_ledger_refused_entries_total',
    help: 'Ledger entries refused when first seen, by kind: forged (no signature of the service), replayed (signed for another revision), vanished (a record gone before its end)',
    labelNames: ['kind'] as const,
  }),
});
