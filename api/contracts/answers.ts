import { z } from 'zod';
import { enrichedFlowFields } from './flow-enrichment';
import { personSchema } from './person-answers';
import { roles } from '../../core/roles';
import { webhookEventTypes } from '../../core/webhook-events';
import { detectionRulesSchema } from '../../core/detection-rules';
import { exporterStatuses } from '../../core/exporter';
import { mitigationActions } from '../../core/mitigation-policy';
import { telemetryKinds } from '../../core/telemetry';
import { prefixStatuses } from '../../core/workspace-prefix';

/**
 * The shapes of the API's answers, as zod schemas. The routes do not parse
 * their answers; the OpenAPI document is generated from these, and the
 * contract test (test/integration/contract.test.ts) checks every real answer
 * against that document, so a drift between a view and its schema fails it.
 */
export const time = z.iso.datetime().meta({ description: 'ISO 8601 UTC' });
export const timeOrNull = time.nullable();
const nextCursor = z.string().nullable().meta({ description: 'the cursor of the next page; null on the last page' });

export const errorAnswer = z
  .object({
    error: z.object({
      code: z.enum([
        'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'SSO_REQUIRED', 'POLICY_DENIED', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT',
        'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'HEADERS_TOO_LARGE', 'REQUEST_TIMEOUT', 'UNAVAILABLE', 'INTERNAL',
        'QUERY_TOO_EXPENSIVE',
      ]),
      message: z.string(),
      details: z.array(z.object({ index: z.number().int().optional(), path: z.string().optional(), message: z.string() })).optional(),
    }),
  })
  .meta({ title: 'Error' });

/** `{data, next_cursor}` of any list. */
export { personSchema };

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: nextCursor });

export { healthAnswer } from './health-answers';

export const keyAnswer = z
  .object({
    key_id: z.string(),
    org_id: z.string(),
    name: z.string(),
    role: z.enum(roles),
    scope: z.literal('tenant'),
    created_at: timeOrNull,
    expires_at: timeOrNull,
    revoked_at: timeOrNull,
    status: z.enum(['active', 'revoked', 'expired']),
    owner: z
      .union([z.literal('service'), personSchema])
      .meta({ description: "the person the key stands for, or `service` for a machine key; a key minted before owners is a person of its own (`key:<key_id>`): re-mint it with an owner" }),
  })
  .meta({ title: 'ApiKey' });
export const mintedKeyAnswer = keyAnswer.extend({ key: z.string().meta({ description: 'ntk_<id>_<secret>, shown once' }) }).meta({ title: 'MintedApiKey' });

export const auditEntryAnswer = z
  .object({
    seq: z.number().int(),
    at: time,
    actor: z.string(),
    actor_person: personSchema.nullable().meta({ description: 'the person behind the actor; null for a service key, the system, and entries written before persons' }),
    action: z.string(),
    target: z.string(),
    details: z.unknown(),
    prev_hash: z.string(),
    hash: z.string(),
  })
  .meta({ title: 'AuditEntry' });
export const auditVerifyAnswer = z
  .object({
    valid: z.boolean().meta({ description: 'every entry checked holds (and, when complete, the chain ends at its recorded head)' }),
    entries: z.number().int().meta({ description: 'entries checked by this call' }),
    broken_at: z.number().int().optional(),
    reason: z.string().optional(),
    complete: z.boolean().meta({ description: 'nothing is left to check; false: go on with next_cursor' }),
    next_cursor: nextCursor,
  })
  .meta({ title: 'AuditVerification' });

export const singleAccepted = z.object({ status: z.literal('accepted'), event_id: z.string() });
export const batchAccepted = z.object({ status: z.literal('accepted'), count: z.number().int(), event_ids: z.array(z.string()) });
export const ingestAnswer = z.union([singleAccepted, batchAccepted]).meta({ title: 'IngestAccepted' });
export const flowSavedAnswer = z.string().meta({ description: '`Flow saved`, or `Flow saved (N flows)` for a batch', example: 'Flow saved' });

export const incidentAnswer = z
  .object({
    id: z.string(),
    severity: z.enum(['high', 'critical']),
    state: z.enum(['open', 'acknowledged', 'resolved']),
    status: z.enum(['open', 'acknowledged', 'resolved']),
    source: z.string(),
    service: z.string(),
    environment: z.string(),
    region: z.string(),
    rule: z.string(),
    escalations: z.array(z.string()),
    signal_count: z.number().int(),
    kinds: z.array(z.string()),
    first_seen: time,
    last_seen: time,
    max_latency_ms: z.number(),
    total_bytes: z.number(),
    rules_version: z.number().int(),
    updated_at: time,
  })
  .meta({ title: 'Incident' });

export const incidentSignalAnswer = z
  .object({
    event_id: z.string(),
    telemetry: z.enum(telemetryKinds),
    timestamp: time,
    received_at: time,
    rule: z.string().nullable().meta({ description: 'the detector rule that derived the signal; null for a posted signal' }),
    asn: z.number().int().nullable(),
    src_ip: z.string().nullable(),
    dst_ip: z.string().nullable(),
    dst_port: z.number().int().nullable(),
    bytes: z.number(),
    latency_ms: z.number(),
  })
  .meta({ title: 'IncidentSignal' });

export const segment = z.object({ from: time, to: time, resolution: z.enum(['1h', '5m', '1m', 'raw']) });
export const flowAnswer = z
  .object({
    event_id: z.string(),
    ts: time,
    src_ip: z.string(),
    dst_ip: z.string(),
    src_port: z.number().int(),
    dst_port: z.number().int(),
    protocol: z.string(),
    bytes: z.number(),
    packets: z.number(),
    exporter: z.string().nullable(),
    in_if: z.number().int(),
    out_if: z.number().int(),
    src_as: z.number().int(),
    dst_as: z.number().int(),
    tcp_flags: z.number().int(),
    tos: z.number().int(),
    flow_start: timeOrNull,
    flow_end: timeOrNull,
    sampling_rate: z.number().int(),
    ...enrichedFlowFields,
  })
  .meta({ title: 'Flow' });
export const metricSeriesAnswer = z
  .object({ data: z.array(z.object({ t: time, avg: z.number(), samples: z.number() })), resolution: z.string() })
  .meta({ title: 'MetricSeries' });

export const policyAnswer = z
  .object({
    policy_id: z.string(),
    id: z.string(),
    name: z.string(),
    status: z.enum(['active', 'inactive']),
    requires_approval: z.boolean(),
    allow_execution: z.boolean(),
    environments: z.array(z.string()),
    severities: z.array(z.enum(['high', 'critical'])),
    max_window_minutes: z.number().int().nullable(),
    approval_timeout_minutes: z.number(),
    allowed_actions: z.array(z.enum(mitigationActions)).meta({ description: 'the mitigation actions allowed; [] allows any' }),
    max_duration_minutes: z.number().int().meta({ description: 'the longest mitigation; 0: no bound' }),
    max_active_mitigations: z.number().int().meta({ description: "the workspace's mitigations active at once, at most; 0: no bound" }),
    min_prefix_length_v4: z.number().int().meta({ description: 'the widest IPv4 destination allowed, as a prefix length; 0: no bound' }),
    min_prefix_length_v6: z.number().int().meta({ description: 'the widest IPv6 destination allowed, as a prefix length; 0: no bound' }),
    created_at: time,
    updated_at: time,
    version: z.number().int(),
  })
  .meta({ title: 'Policy' });

export const exporterAnswer = z
  .object({
    id: z.string(),
    address: z.string(),
    name: z.string(),
    sampling_rate: z.number().int().nullable(),
    status: z.enum(exporterStatuses).meta({ description: 'pending until the platform admin approves it; only an active exporter routes flows' }),
    created_at: time,
    updated_at: time,
    version: z.number().int(),
  })
  .meta({ title: 'Exporter' });
/** The platform admin's view of an exporter: with its workspace. */
export const workspaceExporterAnswer = exporterAnswer.extend({ org_id: z.string() }).meta({ title: 'WorkspaceExporter' });
export const pendingExporterAnswer = workspaceExporterAnswer
  .extend({
    address_active_for: z
      .object({ org_id: z.string(), exporter_id: z.string() })
      .nullable()
      .meta({ description: 'the exporter active at the address now, which an approval would conflict with; null when the address is free' }),
  })
  .meta({ title: 'PendingExporter' });
export const unknownExportersAnswer = z
  .object({ data: z.array(z.object({ address: z.string(), first_seen: time, last_seen: time, datagrams: z.number(), flows: z.number() })) })
  .meta({ title: 'UnknownExporters' });

export const prefixAnswer = z
  .object({
    id: z.string(),
    prefix: z.string().meta({ description: 'CIDR, the network address; IPv6 compressed lower-case' }),
    description: z.string(),
    status: z.enum(prefixStatuses).meta({ description: "pending until the platform admin approves it; mitigations act only within approved prefixes" }),
    created_at: time,
    created_by: z.string().meta({ description: 'the key that declared it' }),
    updated_at: time,
    version: z.number().int(),
  })
  .meta({ title: 'WorkspacePrefix' });
/** The platform admin's view of a prefix: with its workspace. */
export const adminPrefixAnswer = prefixAnswer.extend({ org_id: z.string() }).meta({ title: 'AdminWorkspacePrefix' });
export const pendingPrefixAnswer = adminPrefixAnswer
  .extend({
    overlaps_approved: z
      .object({ org_id: z.string(), prefix_id: z.string(), prefix: z.string() })
      .nullable()
      .meta({ description: "another workspace's approved prefix this one overlaps, which an approval would conflict with; null when none does" }),
  })
  .meta({ title: 'PendingWorkspacePrefix' });

export const rulesAnswer = z
  .object({ version: z.number().int(), rules: detectionRulesSchema, updated_at: timeOrNull, updated_by: z.string().nullable() })
  .meta({ title: 'DetectionRulesVersion' });

export const webhookAnswer = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(webhookEventTypes)),
    description: z.string(),
    status: z.enum(['active', 'failing', 'deleted']),
    failing_since: timeOrNull,
    created_at: time,
    updated_at: time,
    version: z.number().int(),
  })
  .meta({ title: 'Webhook' });
export const createdWebhookAnswer = webhookAnswer.extend({ secret: z.string().meta({ description: 'whsec_…, shown once' }) }).meta({ title: 'CreatedWebhook' });
export const webhookTestAnswer = z.object({ webhook_id: z.string(), event_id: z.string() }).meta({ title: 'WebhookTest' });
export const deliveryAnswer = z
  .object({
    event_id: z.string(),
    event_type: z.string(),
    status: z.string(),
    attempts: z.number().int(),
    response_code: z.number().int().nullable(),
    latency_ms: z.number(),
    error: z.string().nullable(),
    first_attempt_at: time,
    last_attempt_at: time,
    next_attempt_at: timeOrNull,
  })
  .meta({ title: 'WebhookDelivery' });
