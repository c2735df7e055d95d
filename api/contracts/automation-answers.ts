import { z } from 'zod';
import { automationStatuses } from '../../core/automation-plan';
import { personSchema, time, timeOrNull } from './answers';

/** The answers of automation runs and of the mitigations they announce (see answers.ts). */
export const actionPreview = z
  .object({
    window_minutes: z.number().int(),
    destination_bits_per_second: z.number(),
    matched_bits_per_second: z.number(),
    matched_packets_per_second: z.number(),
    share: z.number().meta({ description: 'matched ÷ all traffic towards the destination, 0 to 1' }),
    top_sources: z.array(z.object({ src_ip: z.string(), bits_per_second: z.number(), share: z.number() })),
    approximate: z.boolean().meta({
      description: "true when the action filters on tcp_flags or packet_length and a matched flow held more than one packet (its flags are its packets' ORed, its size their mean), so it may hold packets the rule would not match; false when every matched flow was one packet",
    }),
  })
  .meta({ title: 'ActionPreview', description: 'what the action would have matched in the stored flows of the last minutes' });

export const automationAnswer = z
  .object({
    automation_id: z.string(),
    incident_id: z.string(),
    playbook_id: z.string(),
    playbook_version: z.number().int(),
    status: z.enum(automationStatuses),
    requested_by: z.string().meta({ description: 'the key that wrote the playbook version the run follows' }),
    requested_by_person: personSchema.nullable().meta({ description: 'the person who wrote the playbook version the run follows (null for a service key): they may not approve the run' }),
    requested_at: time,
    updated_at: time,
    decision_deadline: timeOrNull,
    approval_policies: z.array(z.string()),
    approvals: z.array(z.object({ decision: z.enum(['approve', 'deny']), approver_key_id: z.string(), person: personSchema.nullable().meta({ description: 'the person who decided; null for decisions taken before persons were recorded' }), at: time, comment: z.string().optional() })),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    actions: z.array(
      z.object({
        id: z.string(),
        type: z.enum(['blackhole', 'flowspec_discard', 'flowspec_rate_limit', 'webhook']),
        destination: z.string().nullable(),
        duration_minutes: z.number().int(),
        preview: actionPreview.nullable(),
        starts_at: timeOrNull,
        ends_at: timeOrNull,
        withdrawn_at: timeOrNull,
        fingerprint: z
          .object({
            attack_share: z.number().meta({ description: "share of the attack's packets (the destination's stored flows in the preview window) the rule covers" }),
            baseline_share: z.number().meta({ description: "share of the destination's normal traffic (its stored flows in the hour before) the rule covers" }),
            rule: z.object({
              protocols: z.array(z.number().int()), source_ports: z.array(z.number().int()), destination_ports: z.array(z.number().int()),
              tcp_flags: z.array(z.string()), packet_length: z.object({ min: z.number().int(), max: z.number().int() }).nullable(),
            }),
          })
          .optional()
          .meta({ description: 'a flowspec_fingerprint action only: the Flowspec discard the fingerprint of the attack on the stored flows became (announced as a flowspec_discard)' }),
      }),
    ),
  })
  .meta({ title: 'Automation' });

export const automationDecisionAnswer = z.object({ automation_id: z.string(), decision: z.enum(['approve', 'deny']) }).meta({ title: 'AutomationDecision' });
export const mitigationFields = {
  automation_id: z.string(), incident_id: z.string(), id: z.string(), type: z.string(), destination: z.string(), starts_at: time, ends_at: time,
};
export const mitigationAnswer = z.object(mitigationFields).meta({ title: 'Mitigation' });
export const adminMitigationAnswer = z.object({ org_id: z.string(), ...mitigationFields }).meta({ title: 'WorkspaceMitigation' });
