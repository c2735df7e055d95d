import { defineSettings, integer, setting } from '../core/settings';
import { defaultSupervision, type SupervisionConfig } from './supervisor';

/** How the local engines of the embedded default are kept running (engines/supervisor.ts). */
export const supervisionSettings = defineSettings(
  'Supervision of the embedded engines',
  {
    ENGINE_CHECK_INTERVAL_MS: setting(integer(50, 60_000).default(defaultSupervision.checkIntervalMs), 'how often each embedded engine is checked'),
    ENGINE_RESTART_BACKOFF_MS: setting(integer(10, 60_000).default(defaultSupervision.backoffMs), 'the first wait between failed restarts of an embedded engine; it doubles'),
    ENGINE_RESTART_MAX_BACKOFF_MS: setting(integer(10, 600_000).default(defaultSupervision.maxBackoffMs), 'the longest wait between failed restarts of an embedded engine'),
    ENGINE_LIVENESS_FAIL_AFTER_MS: setting(
      integer(1000, 3_600_000).default(defaultSupervision.livenessFailAfterMs),
      'how long the embedded nats-server may run while JetStream stores nothing before it is killed and restarted',
    ),
  },
  (e): { supervision: SupervisionConfig } => ({
    supervision: {
      checkIntervalMs: e.ENGINE_CHECK_INTERVAL_MS,
      backoffMs: e.ENGINE_RESTART_BACKOFF_MS,
      maxBackoffMs: e.ENGINE_RESTART_MAX_BACKOFF_MS,
      livenessFailAfterMs: e.ENGINE_LIVENESS_FAIL_AFTER_MS,
    },
  }),
);
