import { defineSettings, integer, setting } from '../../core/settings';
import { defaultReplayReconcilerConfig as byDefault } from './replay-reconciler';

/** Replays stored `queued` whose workflow never started: how often they are looked for, after how long, when one is failed. */
export const replayReconcilerSettings = defineSettings(
  'The replay reconciler',
  {
    REPLAY_RECONCILE_INTERVAL_MS: setting(integer(100, 3_600_000).default(byDefault.intervalMs), 'how often the replay reconciler looks for replays stranded in `queued`'),
    REPLAY_RECONCILE_GRACE_MS: setting(integer(0, 3_600_000).default(byDefault.graceMs), 'how old a replay stranded in `queued` must be before the reconciler takes it'),
    REPLAY_START_FAIL_AFTER_MS: setting(integer(0, 86_400_000).default(byDefault.failAfterMs), "how long a replay's workflow may fail to start before the replay is failed"),
  },
  (e) => ({
    replayReconciler: { intervalMs: e.REPLAY_RECONCILE_INTERVAL_MS, graceMs: e.REPLAY_RECONCILE_GRACE_MS, failAfterMs: e.REPLAY_START_FAIL_AFTER_MS },
  }),
);
