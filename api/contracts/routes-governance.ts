import { z } from 'zod';
import * as rules from '../routes/detection-rules';
import * as exporters from '../routes/exporters';
import * as policies from '../routes/policies';
import * as prefixes from '../routes/prefixes';
import * as replays from '../routes/replays';
import * as webhooks from '../routes/webhooks';
import * as a from './answers';
import * as r from './replay-answers';
import type { RouteContract } from './contract';
import { noQuery } from '../validation';
import { guardrailChangeAnswer } from './routes-guardrails';

/** Policies, replays and approvals, exporters, prefixes, detection rules, webhooks. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const id = z.string().meta({ description: 'the object id; an id the workspace does not have is 404' });

interface CrudSpec {
  base: string;
  tag: string;
  noun: string;
  /** The noun's plural, when not the noun and `s`. */
  plural?: string;
  manage: string;
  answer: z.ZodType;
  created?: z.ZodType;
  create: z.ZodType;
  createExample: unknown;
  /** The change a PATCH takes; absent: the object has no PATCH. */
  patch?: z.ZodType;
  patchExample?: unknown;
  list: z.ZodObject;
  /** Refusals of a creation beyond validation (409: a workspace at its cap). */
  createErrors?: number[];
  /** A change or deletion that loosens a guardrail may be held for a second person: 202 with the held change. */
  held?: z.ZodType;
}

const heldAnswer = (s: CrudSpec): Record<number, { description: string; schema: z.ZodType }> =>
  s.held ? { 202: json('the change loosens a guardrail and waits for a second person (the workspace asks for four eyes)', s.held) } : {};

/** The five routes every managed object has: create, list, get, patch (unless it has none), delete (a soft delete: 409 when done twice). */
function crud(s: CrudSpec): RouteContract[] {
  const common = { tag: s.tag, access: 'workspace' as const };
  const one = `${s.base}/{id}`;
  const patch: RouteContract[] = s.patch
    ? [{
        ...common, method: 'patch', path: one, summary: `Change a ${s.noun}`, permission: s.manage, params: { id }, errors: [409],
        body: { schema: s.patch, example: s.patchExample }, responses: { 200: json(`the ${s.noun}`, s.answer), ...heldAnswer(s) },
      }]
    : [];
  return [
    {
      ...common, method: 'post', path: s.base, summary: `Create a ${s.noun}`, permission: s.manage, errors: s.createErrors,
      body: { schema: s.create, example: s.createExample }, responses: { 201: json(`the ${s.noun}`, s.created ?? s.answer) },
    },
    { ...common, method: 'get', path: s.base, summary: `List ${s.plural ?? `${s.noun}s`}`, permission: 'read', query: s.list, responses: { 200: json('a page', a.pageOf(s.answer)) } },
    { ...common, method: 'get', path: one, summary: `One ${s.noun}`, permission: 'read', params: { id }, responses: { 200: json(`the ${s.noun}`, s.answer) } },
    ...patch,
    {
      ...common, method: 'delete', path: one, summary: `Delete a ${s.noun} (kept for the record)`, permission: s.manage, params: { id },
      errors: [409], responses: { 200: json(`the ${s.noun}, now inactive or deleted`, s.answer), ...heldAnswer(s) },
    },
  ];
}

const decisions = (['approve', 'deny'] as const).map(
  (decision): RouteContract => ({
    method: 'post', path: `/v1/replays/{id}/${decision}`, summary: `${decision === 'approve' ? 'Approve' : 'Deny'} a waiting replay`,
    tag: 'Replays', access: 'workspace', permission: 'approve', params: { id }, errors: [409],
    body: { schema: replays.decisionSchema, example: { comment: 'checked with the NOC' }, optional: true },
    responses: { 202: json('the decision was taken', r.decisionAnswer) },
  }),
);

/** The platform admin's decisions on a pending registration: 409 once decided, or (approval) while another exporter is active at the address. */
const exporterDecisions = (['approve', 'reject'] as const).map(
  (decision): RouteContract => ({
    method: 'post', path: `/v1/exporters/{id}/${decision}`, summary: `${decision === 'approve' ? 'Approve' : 'Reject'} a pending exporter`,
    tag: 'Exporters', access: 'platform-admin', params: { id: z.string().meta({ description: 'the exporter id, in any workspace' }) }, errors: [409],
    responses: { 200: json(`the exporter, now ${decision === 'approve' ? 'active' : 'rejected'}`, a.workspaceExporterAnswer) },
  }),
);

/** The platform admin's decisions on a declared prefix: 409 once decided, or (approval) while it overlaps another workspace's approved prefix. */
const prefixDecisions = (['approve', 'reject'] as const).map(
  (decision): RouteContract => ({
    method: 'post', path: `/v1/prefixes/{id}/${decision}`, summary: `${decision === 'approve' ? 'Approve' : 'Reject'} a declared prefix`,
    tag: 'Prefixes', access: 'platform-admin', params: { id: z.string().meta({ description: 'the prefix id, in any workspace' }) }, errors: [409],
    responses: { 200: json(`the prefix, now ${decision === 'approve' ? 'approved' : 'rejected'}`, a.adminPrefixAnswer) },
  }),
);

export const governanceContracts: RouteContract[] = [
  ...crud({
    base: '/v1/policies', tag: 'Policies', noun: 'policy', manage: 'policies:manage', answer: a.policyAnswer,
    create: policies.createSchema,
    createExample: {
      name: 'prod needs a human', requires_approval: true, environments: ['prod', 'staging'], approval_timeout_minutes: 30,
      allowed_actions: ['blackhole', 'flowspec_rate_limit'], max_duration_minutes: 120, max_active_mitigations: 20, min_prefix_length_v4: 24, min_prefix_length_v6: 48,
    },
    patch: policies.patchSchema, patchExample: { max_window_minutes: 60 }, list: policies.listSchema, held: guardrailChangeAnswer,
  }),
  {
    method: 'post', path: '/v1/replay', summary: "Replay an incident's automation path", tag: 'Replays', access: 'workspace',
    permission: 'replays:run', errors: [404], body: { schema: replays.requestSchema, example: { incident_id: 'inc_0123456789abcdef', window_minutes: 30 } },
    responses: { 202: json('queued', r.replayAcceptedAnswer) },
  },
  {
    method: 'get', path: '/v1/replays', summary: 'List replays', tag: 'Replays', access: 'workspace', permission: 'read',
    query: replays.listSchema, responses: { 200: json('a page of replays', a.pageOf(r.replayAnswer)) },
  },
  {
    method: 'get', path: '/v1/approvals', summary: 'The replays awaiting approval', tag: 'Replays', access: 'workspace', permission: 'read',
    query: replays.listSchema, responses: { 200: json('a page of replays', a.pageOf(r.replayAnswer)) },
  },
  {
    method: 'get', path: '/v1/replays/{id}', summary: 'One replay: status, approvals, error, report', tag: 'Replays', access: 'workspace',
    permission: 'read', params: { id }, responses: { 200: json('the replay', r.replayAnswer) },
  },
  ...decisions,
  ...crud({
    base: '/v1/exporters', tag: 'Exporters', noun: 'exporter', manage: 'exporters:manage', answer: a.exporterAnswer,
    create: exporters.createSchema, createExample: { address: '192.0.2.10', name: 'edge-router-1', sampling_rate: 1000 },
    patch: exporters.patchSchema, patchExample: { sampling_rate: null }, list: exporters.listSchema,
  }),
  {
    method: 'get', path: '/v1/exporters/unknown', summary: 'Exporters no workspace registered', tag: 'Exporters', access: 'platform-admin',
    query: exporters.unknownSchema, responses: { 200: json('the unknown exporters', a.unknownExportersAnswer) },
  },
  {
    method: 'get', path: '/v1/exporters/pending', summary: 'Registrations awaiting approval, in every workspace', tag: 'Exporters',
    access: 'platform-admin', query: exporters.pendingSchema,
    responses: { 200: json('a page of pending registrations, oldest first', a.pageOf(a.pendingExporterAnswer)) },
  },
  ...exporterDecisions,
  ...crud({
    base: '/v1/prefixes', tag: 'Prefixes', noun: 'prefix', plural: 'prefixes', manage: 'prefixes:manage', answer: a.prefixAnswer,
    create: prefixes.declareSchema, createExample: { prefix: '198.51.100.0/24', description: 'customer edge' }, list: prefixes.listSchema,
    createErrors: [409],
  }),
  {
    method: 'get', path: '/v1/prefixes/pending', summary: 'Prefixes awaiting approval, in every workspace', tag: 'Prefixes',
    access: 'platform-admin', query: prefixes.pendingSchema,
    responses: { 200: json('a page of pending declarations, oldest first', a.pageOf(a.pendingPrefixAnswer)) },
  },
  ...prefixDecisions,
  {
    method: 'post', path: '/v1/prefixes/{id}/revoke', summary: 'Revoke an approved prefix: its active mitigations are withdrawn', tag: 'Prefixes',
    access: 'platform-admin', params: { id: z.string().meta({ description: 'the prefix id, in any workspace' }) }, errors: [409],
    responses: { 200: json('the prefix, now revoked', a.adminPrefixAnswer) },
  },
  {
    method: 'get', path: '/v1/detection-rules', summary: 'The detection rules in force', tag: 'Detection rules', access: 'workspace',
    permission: 'read', query: noQuery, responses: { 200: json('the version in force', a.rulesAnswer) },
  },
  {
    method: 'put', path: '/v1/detection-rules', summary: 'Replace the detection rules (the next version)', tag: 'Detection rules',
    access: 'workspace', permission: 'rules:manage', errors: [409],
    body: { schema: rules.putSchema, example: { version: 3, rules: { correlation_window_seconds: 600, metric_thresholds: { latency_ms: { at_least: 500 } } } } },
    responses: { 200: json('the version in force after the change', a.rulesAnswer) },
  },
  {
    method: 'get', path: '/v1/detection-rules/versions/{version}', summary: 'One version of the detection rules', tag: 'Detection rules',
    access: 'workspace', permission: 'read', query: noQuery, params: { version: rules.versionParam },
    responses: { 200: json('that version', a.rulesAnswer) },
  },
  ...crud({
    base: '/v1/webhooks', tag: 'Webhooks', noun: 'webhook', manage: 'webhooks:manage', answer: a.webhookAnswer, created: a.createdWebhookAnswer,
    create: webhooks.createSchema, createExample: { url: 'https://hooks.example.com/nettel', events: ['incident.opened', 'incident.resolved'] },
    patch: webhooks.patchSchema, patchExample: { description: 'on-call pager' }, list: webhooks.listSchema, createErrors: [409],
  }),
  {
    method: 'post', path: '/v1/webhooks/{id}/test', summary: 'Send a webhook.test event', tag: 'Webhooks', access: 'workspace',
    permission: 'webhooks:manage', params: { id }, responses: { 202: json('queued for delivery', a.webhookTestAnswer) },
  },
  {
    method: 'get', path: '/v1/webhooks/{id}/deliveries', summary: "A subscription's delivery log", tag: 'Webhooks', access: 'workspace',
    permission: 'read', params: { id }, query: webhooks.pageSchema, responses: { 200: json('a page of deliveries', a.pageOf(a.deliveryAnswer)) },
  },
];
