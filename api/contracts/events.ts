import { z } from 'zod';
import { automationEventTypes, incidentEventTypes, replayEventTypes, testEventType } from '../../core/webhook-events';
import { incidentAnswer } from './answers';
import { automationAnswer } from './automation-answers';
import { replayAnswer } from './replay-answers';

/**
 * What a webhook receiver gets: CloudEvents 1.0 in structured mode, signed
 * as Standard Webhooks. The OpenAPI document describes each type under
 * `webhooks`; the webhook test validates every delivery against it.
 */
const incidentEventData = incidentAnswer
  .omit({ updated_at: true })
  .extend({
    previous_id: z.string().optional().meta({ description: 'the id the incident had before a late, earlier signal moved its start' }),
    attack: z
      .object({ type: z.string(), peak: z.object({ pps: z.number(), bps: z.number(), fps: z.number() }) })
      .optional()
      .meta({ description: 'an incident a rate detector opened: the attack type and the peak total packets, bits and flows a second so far' }),
  })
  .meta({ title: 'IncidentEventData' });

const testEventData = z.object({ webhook_id: z.string(), message: z.string() }).meta({ title: 'WebhookTestEventData' });

function cloudEvent(type: string, data: z.ZodType, collection: string) {
  return z
    .object({
      specversion: z.literal('1.0'),
      id: z.string().meta({ description: 'derived from what changed: the same change always has the same id (de-duplicate on it; it is also `webhook-id`)' }),
      source: z.string().meta({ description: `/orgs/<org_id>/${collection}` }),
      type: z.literal(type),
      subject: z.string().meta({ description: 'the id of the object that changed' }),
      time: z.string().meta({ format: 'date-time' }),
      datacontenttype: z.literal('application/json'),
      workspace: z.string().meta({ description: 'the workspace (org) the event belongs to' }),
      data,
    })
    .strict();
}

export interface EventContract {
  type: string;
  summary: string;
  schema: z.ZodType;
}

const incidentSummaries: Record<(typeof incidentEventTypes)[number], string> = {
  'incident.opened': 'An incident was opened',
  'incident.escalated': 'An incident became critical',
  'incident.acknowledged': 'An incident was acknowledged',
  'incident.resolved': 'An incident was resolved',
};
const replaySummaries: Record<(typeof replayEventTypes)[number], string> = {
  'replay.awaiting_approval': 'A policy holds a replay for approvers',
  'replay.completed': 'A replay ran',
  'replay.denied': 'A replay was denied',
  'replay.expired': 'No decision on a replay came in time',
};

const automationSummaries: Record<(typeof automationEventTypes)[number], string> = {
  'automation.awaiting_approval': 'A policy holds an automation run for approvers',
  'automation.executed': "An automation run's mitigations were announced",
  'automation.withdrawn': "An automation run's mitigations were withdrawn (at their end, or by an approver)",
  'automation.failed': "An automation run's mitigations could not be put in place",
};

export const eventContracts: readonly EventContract[] = [
  ...incidentEventTypes.map((type) => ({ type, summary: incidentSummaries[type], schema: cloudEvent(type, incidentEventData, 'incidents') })),
  ...replayEventTypes.map((type) => ({ type, summary: replaySummaries[type], schema: cloudEvent(type, replayAnswer, 'replays') })),
  ...automationEventTypes.map((type) => ({ type, summary: automationSummaries[type], schema: cloudEvent(type, automationAnswer, 'automations') })),
  { type: testEventType, summary: 'POST /v1/webhooks/{id}/test, to that subscription only', schema: cloudEvent(testEventType, testEventData, 'webhooks') },
];
