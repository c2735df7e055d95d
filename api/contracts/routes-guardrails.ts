import { z } from 'zod';
import * as guardrails from '../routes/guardrails';
import { noQuery } from '../validation';
import { timeOrNull } from './answers';
import type { RouteContract } from './contract';
import { personSchema } from './person-answers';

/** Guardrails with two pairs of eyes (issue 32): the workspace's setting and the changes held for a second person. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const tag = 'Guardrails';

export const guardrailChangeAnswer = z
  .object({
    change_id: z.string(),
    kind: z.enum(['policy.update', 'policy.deactivate', 'playbooks.update', 'guardrails.update']),
    target: z.string().meta({ description: 'the policy id, `playbooks`, or the workspace for its own setting' }),
    change: z.unknown().meta({ description: 'the change as it was asked, applied as it is once approved' }),
    reasons: z.array(z.string()).meta({ description: 'why it loosens a guardrail' }),
    status: z.enum(['awaiting_approval', 'approved', 'denied']),
    requested_by: z.string(),
    requested_by_person: personSchema.nullable(),
    requested_at: timeOrNull,
    decided_by: z.string().nullable(),
    decided_by_person: personSchema.nullable(),
    decided_at: timeOrNull,
  })
  .meta({ title: 'GuardrailChange' });

export const guardrailSettingsAnswer = z
  .object({
    four_eyes: z.boolean().meta({ description: 'loosening a guardrail waits for a second person; false (one pair of eyes) until the workspace turns it on' }),
    ungated: z.boolean().meta({ description: 'enabled playbooks act with no active policy requiring an approver: nobody decides their runs' }),
    version: z.number().int(),
    updated_at: timeOrNull,
    updated_by: z.string().nullable(),
  })
  .meta({ title: 'GuardrailSettings' });

const id = z.string().meta({ description: 'the change id (grc_…)' });

export const guardrailContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/guardrails', summary: "The workspace's guardrail setting, and whether its playbooks act ungated", tag, access: 'workspace',
    permission: 'read', query: noQuery, responses: { 200: json('the setting', guardrailSettingsAnswer) },
  },
  {
    method: 'put', path: '/v1/guardrails', summary: 'Make loosening a guardrail wait for a second person (or no longer)', tag, access: 'workspace',
    permission: 'policies:manage', body: { schema: guardrails.settingsPutSchema, example: { four_eyes: true } },
    responses: { 200: json('the setting now', guardrailSettingsAnswer), 202: json('turning it off waits for a second person', guardrailChangeAnswer) },
  },
  {
    method: 'get', path: '/v1/guardrail-changes', summary: 'The changes held for a second person, newest first', tag, access: 'workspace',
    permission: 'read', query: guardrails.changesListSchema, responses: { 200: json('the changes', z.object({ data: z.array(guardrailChangeAnswer) })) },
  },
  {
    method: 'get', path: '/v1/guardrail-changes/{id}', summary: 'One held change', tag, access: 'workspace',
    permission: 'read', query: noQuery, params: { id }, responses: { 200: json('the change', guardrailChangeAnswer) },
  },
  ...(['approve', 'deny'] as const).map(
    (decision): RouteContract => ({
      method: 'post', path: `/v1/guardrail-changes/{id}/${decision}`, summary: `${decision === 'approve' ? 'Approve (and apply)' : 'Deny'} a held change: another person than its requester`,
      tag, access: 'workspace', permission: 'approve', query: noQuery, params: { id }, errors: [409],
      responses: { 200: json(`the change, now ${decision === 'approve' ? 'approved and applied' : 'denied'}`, guardrailChangeAnswer) },
    }),
  ),
];
