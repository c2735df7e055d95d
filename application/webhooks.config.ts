import { z } from 'zod';
import { allowedHostSet, defaultRetrySchedule } from '../core/outbound';
import { commaList, defineSettings, integer, optionalSecret, setting } from '../core/settings';

/** Outbound webhooks: the outbound rules, the secrets' sealing key, and each delivery's limits and retry schedule. */
export const webhooksSettings = defineSettings(
  'Webhooks',
  {
    WEBHOOK_ALLOWED_HOSTS: setting(z.string().default(''), 'hosts webhooks may reach over http and at internal addresses, comma-separated (see [notifications](notifications.md))'),
    WEBHOOK_SECRETS_KEY: setting(
      optionalSecret('WEBHOOK_SECRETS_KEY', 16),
      'key (≥ 16 characters) that seals webhook signing secrets at rest (AES-256-GCM, a key per sealing by HKDF, bound to the workspace and webhook). Unset on the embedded default (chDB, one process), the start generates one and keeps it in `$DATA_DIR/webhook-secrets-key` (mode 0600); with a ClickHouse server every api and stream-workers process must share one, and one without it fails to start',
      'generated on chDB',
    ),
    WEBHOOK_SECRETS_PREVIOUS_KEYS: setting(commaList(), 'keys of before a rotation (comma-separated): secrets they sealed still open (see [security](security/README.md))'),
    WEBHOOK_TIMEOUT_MS: setting(integer(100, 60_000).default(10_000), 'how long one delivery attempt may take'),
    WEBHOOK_MAX_RESPONSE_BYTES: setting(integer(0, 10 * 1024 * 1024).default(64 * 1024), "the most of a receiver's answer one delivery attempt reads"),
    WEBHOOK_CONCURRENCY: setting(integer(1, 1_000).default(64), 'delivery attempts at once'),
    WEBHOOK_RETRY_BASE_MS: setting(integer(10, 3_600_000).default(defaultRetrySchedule.baseMs), 'the retry schedule: the first delay'),
    WEBHOOK_RETRY_MAX_MS: setting(integer(10, 86_400_000).default(defaultRetrySchedule.maxMs), 'the retry schedule: the largest delay'),
    WEBHOOK_RETRY_FOR_MS: setting(integer(1_000, 30 * 86_400_000).default(defaultRetrySchedule.giveUpAfterMs), 'the retry schedule: how long a delivery is retried'),
    WEBHOOK_MAX_PER_WORKSPACE: setting(integer(1, 10_000).default(20), 'webhooks a workspace may hold (deleted ones aside); 409 past it'),
    WEBHOOK_TEST_SENDS_PER_MINUTE: setting(integer(1, 10_000).default(10), 'test sends a workspace may ask for a minute; 429 past it'),
  },
  (e) => ({
    webhooks: {
      allowedHosts: allowedHostSet(e.WEBHOOK_ALLOWED_HOSTS),
      /** Seals new signing secrets; resolved at start (service/stack.ts: generated on the embedded default, required with a ClickHouse server). */
      secretsKey: e.WEBHOOK_SECRETS_KEY,
      /** Keys of before a rotation: secrets they sealed still open. */
      previousSecretsKeys: e.WEBHOOK_SECRETS_PREVIOUS_KEYS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: e.WEBHOOK_MAX_RESPONSE_BYTES,
      retry: { baseMs: e.WEBHOOK_RETRY_BASE_MS, maxMs: e.WEBHOOK_RETRY_MAX_MS, giveUpAfterMs: e.WEBHOOK_RETRY_FOR_MS },
      concurrency: e.WEBHOOK_CONCURRENCY,
      /** Webhooks a workspace may have (deleted ones aside), and test sends it may ask for a minute. */
      maxPerWorkspace: e.WEBHOOK_MAX_PER_WORKSPACE,
      testSendsPerMinute: e.WEBHOOK_TEST_SENDS_PER_MINUTE,
    },
  }),
);
