import { defineSettings, integer, setting } from '../../core/settings';
import { defaultPolicyCooldownMinutes } from './activities/approval-activities';

/** Who may decide runs: how long a person who changed a workspace's policies may not approve under them. */
export const approvalsSettings = defineSettings(
  'Approvals',
  {
    APPROVAL_POLICY_COOLDOWN_MINUTES: setting(
      integer(0, 7 * 24 * 60).default(defaultPolicyCooldownMinutes),
      "minutes after a person created, changed or deactivated one of a workspace's policies during which they may not approve or deny its replays and automation runs (refusal `policy_author`); 0 turns the rule off",
    ),
  },
  (e) => ({
    /** The four-eyes rule's cooldown after a policy change (workers/governance/activities/approval-activities.ts). */
    approvals: { policyCooldownMinutes: e.APPROVAL_POLICY_COOLDOWN_MINUTES },
  }),
);
