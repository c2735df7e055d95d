import { z } from 'zod';
import { replayStatuses } from '../../core/replay';
import { personSchema, time, timeOrNull } from './answers';
import { actionPreview } from './automation-answers';

/**
 * The answers of replays and their decisions (see answers.ts): a replay as
 * the API shows it, with the parity report it ends with.
 */

/** The replay's incident as recorded, or as the replay derived it (workflows/replay-contract.ts: IncidentSummary). */
const replayedIncident = z.object({
  id: z.string(),
  severity: z.string(),
  state: z.string(),
  signal_count: z.number().int(),
  first_seen: time,
  last_seen: time,
  kinds: z.array(z.string()),
  rule: z.string(),
  escalations: z.array(z.string()),
});
/** The parity report of a completed replay (workflows/replay-contract.ts: ReplayReport). */
export const replayReportAnswer = z
  .object({
    parity: z.boolean().meta({ description: 'the replay derived the recorded incident again' }),
    differences: z.array(z.object({ field: z.string(), recorded: z.unknown(), replayed: z.unknown() })),
    recorded: replayedIncident,
    replayed: replayedIncident.nullable().meta({ description: 'null when the replay derived no incident' }),
    automation: z.object({
      window: z.object({ from: time, to: time, minutes: z.number().int() }),
      flows_examined: z.number(),
      bytes_examined: z.number(),
      signals_examined: z.number().int(),
      actions: z.array(z.object({ action: z.literal('rate_limit'), src_ip: z.string(), dst_ip: z.string(), bytes: z.number(), flows: z.number() })),
      playbooks: z
        .array(
          z.object({
            playbook_id: z.string(),
            playbook_version: z.number().int(),
            actions: z.array(z.object({ type: z.enum(['blackhole', 'flowspec_discard', 'flowspec_rate_limit', 'webhook']), destination: z.string().nullable(), duration_minutes: z.number().int(), preview: actionPreview.nullable() })),
            refused: z.string().nullable().meta({ description: 'why the playbook could not act on the incident (no destination address), else null' }),
          }),
        )
        .meta({ description: "what the workspace's playbooks in force whose match holds would do, previewed on the replay's window" }),
    }),
    duration_ms: z.number(),
  })
  .meta({ title: 'ReplayReport' });

export const replayAcceptedAnswer = z.object({ replay_id: z.string(), status: z.enum(replayStatuses), incident_id: z.string() }).meta({ title: 'ReplayAccepted' });
export const decisionAnswer = z.object({ replay_id: z.string(), decision: z.enum(['approve', 'deny']) }).meta({ title: 'ReplayDecision' });
export const replayAnswer = z
  .object({
    replay_id: z.string(),
    incident_id: z.string(),
    status: z.enum(replayStatuses),
    requested_by: z.string(),
    requested_by_person: personSchema.nullable().meta({ description: 'the person who requested the replay (null for a service key): they may not decide it' }),
    requested_at: time,
    updated_at: time,
    window_minutes: z.number().int(),
    decision_deadline: timeOrNull.meta({ description: 'when the approval gate closes: set by the workflow once the replay awaits a decision, and kept after the decision (when the gate would have closed); null before' }),
    approval_policies: z.array(z.string()).meta({ description: 'the ids of the active policies that asked for approval; empty before the replay awaits a decision' }),
    approvals: z.array(z.object({ decision: z.enum(['approve', 'deny']), approver_key_id: z.string(), person: personSchema.nullable().meta({ description: 'the person who decided; null for decisions taken before persons were recorded' }), at: time, comment: z.string().optional() })),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    report: replayReportAnswer.nullable().meta({ description: 'the parity report once completed, else null' }),
  })
  .meta({ title: 'Replay' });
