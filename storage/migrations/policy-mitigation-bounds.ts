import { columnsAdded, type Migration } from './migration';

/**
 * Policies carry their mitigation bounds (core/mitigation-policy.ts): the
 * actions allowed (JSON), the longest mitigation, the most active at once,
 * and the narrowest prefix per family. Every default is "no bound", so
 * policies stored before bound nothing.
 */
const columns = [
  "allowed_actions String DEFAULT '[]'",
  'max_duration_minutes UInt32 DEFAULT 0',
  'max_active_mitigations UInt32 DEFAULT 0',
  'min_prefix_length_v4 UInt8 DEFAULT 0',
  'min_prefix_length_v6 UInt8 DEFAULT 0',
];

export const policyMitigationBoundsMigrations: Migration[] = [{ id: '0019_policy_mitigation_bounds', ...columnsAdded('policies', columns) }];
