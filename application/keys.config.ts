import { decisionSigningKeyMinLength } from '../core/decision-token';
import { defineSettings, optionalSecret, setting } from '../core/settings';

/** The keys the audit ledger chains its entries with and replay decisions are signed with; unset, the start resolves them. */
export const keysSettings = defineSettings(
  'Audit and decision keys',
  {
    AUDIT_CHAIN_KEY: setting(
      optionalSecret('AUDIT_CHAIN_KEY', 32),
      "key (≥ 32 characters) the audit ledger's entries are chained with (HMAC-SHA256), held outside the database; generated into `$DATA_DIR/audit-chain-key` on the embedded default, required with a ClickHouse server by the api, stream-workers (the rate detectors' resolutions) and temporal-worker processes. Keep it with the backups: entries chained under a lost key no longer verify",
      'generated on chDB',
    ),
    DECISION_SIGNING_KEY: setting(
      optionalSecret('DECISION_SIGNING_KEY', decisionSigningKeyMinLength),
      `key (≥ ${decisionSigningKeyMinLength} characters) the API signs replay decisions' tokens with and the Temporal worker checks them with; generated into \`$DATA_DIR/decision-signing-key\` on the embedded default, required with a ClickHouse server by the api and temporal-worker processes`,
      'generated on chDB',
    ),
  },
  (e) => ({
    /** The key audit entries are chained with (HMAC); resolved at start (service/stack.ts). */
    audit: { chainKey: e.AUDIT_CHAIN_KEY },
    /** Signs replay decisions' tokens (core/decision-token.ts); unset, the start resolves it (service/decision-signing-key.ts). */
    decisions: { signingKey: e.DECISION_SIGNING_KEY },
  }),
);
