import { z } from 'zod';
import { flowSchema } from '../../core/flow';
import { flowDimensions } from '../../core/flow-dimensions';
import { metricEventSchema, signalSchema } from '../../core/telemetry';
import * as audit from '../routes/audit';
import * as flows from '../routes/flow-analytics';
import * as incidents from '../routes/incidents';
import * as keys from '../routes/keys';
import * as telemetry from '../routes/telemetry';
import * as a from './answers';
import { completionAnswer, flowSeriesAnswer, topAnswer } from './analyst-answers';
import * as complete from '../routes/flow-complete';
import type { RouteContract } from './contract';
import { incidentWithAttackAnswer } from './attack-answers';

/** Health, keys, audit, ingestion, incidents and analyst queries. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const id = z.string().meta({ description: 'the object id; an id the workspace does not have is 404' });
const flowFilters = {
  ...Object.fromEntries(
    flowDimensions.map((d) => [d, { description: `filter: a comma-separated list of ${d} values (addresses take CIDR prefixes), any matches` }]),
  ),
  filter: {
    description:
      "a filter in the analyst's filter language (docs/analyst-queries.md), e.g. `dst_as = 13335 AND NOT src_ip << 10.0.0.0/8`; " +
      'a bad filter is 400 naming the position and what was expected there',
  },
};
const ingestExample = (record: object) => ({ body: record, batch: [record, record] });

function ingestRoute(path: string, summary: string, record: z.ZodType, example: object): RouteContract {
  const examples = ingestExample(example);
  return {
    method: 'post',
    path,
    summary,
    tag: 'Ingestion',
    access: 'workspace',
    permission: 'telemetry:write',
    body: { schema: z.union([record, z.array(record).min(1)]), example: examples.body, ndjson: true },
    rateLimited: true,
    responses: { 202: json('accepted: one record, or a batch', a.ingestAnswer) },
  };
}

const flowExample = { src_ip: '10.0.0.1', dst_ip: '10.0.0.2', bytes: 1200, packets: 3, protocol: 'tcp', dst_port: 443 };

export const dataContracts: RouteContract[] = [
  {
    method: 'get', path: '/healthz', summary: "Each engine's and loop's state (with the platform admin key: versions and errors too)", tag: 'Operations',
    access: 'public', errors: [401, 429],
    responses: { 200: json('every engine and loop is up', a.healthAnswer), 503: json('degraded: an engine or a loop is down', a.healthAnswer) },
  },
  {
    method: 'get', path: '/metrics', summary: 'Prometheus metrics (bearer: METRICS_TOKEN or the platform admin key)', tag: 'Operations', access: 'platform-admin',
    responses: { 200: { description: 'Prometheus text exposition', schema: z.string(), contentType: 'text/plain' } },
  },
  {
    method: 'post', path: '/v1/api-keys', summary: 'Mint a key (the platform admin without body: a new workspace)', tag: 'Keys',
    access: 'admin-or-workspace', permission: 'keys:manage',
    body: { schema: keys.mintSchema, example: { role: 'analyst', name: 'grafana', expires_in_seconds: 86400 }, optional: true },
    responses: { 201: json('the key and its secret, shown once', a.mintedKeyAnswer) },
  },
  {
    method: 'get', path: '/v1/api-keys', summary: 'List keys', tag: 'Keys', access: 'admin-or-workspace', permission: 'keys:manage',
    query: keys.listSchema, responses: { 200: json('a page of keys', a.pageOf(a.keyAnswer)) },
  },
  {
    method: 'delete', path: '/v1/api-keys/{id}', summary: 'Revoke a key', tag: 'Keys', access: 'admin-or-workspace', permission: 'keys:manage',
    params: { id }, errors: [409], responses: { 200: json('the revoked key', a.keyAnswer) },
  },
  {
    method: 'get', path: '/v1/audit', summary: "The workspace's audit ledger, newest first", tag: 'Audit', access: 'admin-or-workspace',
    permission: 'audit:read', query: audit.listSchema, responses: { 200: json('a page of entries', a.pageOf(a.auditEntryAnswer)) },
  },
  {
    method: 'get', path: '/v1/audit/verify', summary: "Verify the ledger's hash chain", tag: 'Audit', access: 'admin-or-workspace',
    permission: 'audit:read', query: audit.verifySchema, responses: { 200: json('the verdict on the entries this call checked', a.auditVerifyAnswer) },
  },
  {
    ...ingestRoute('/flow', 'Ingest flows', flowSchema, flowExample),
    responses: {
      201: { description: '`Flow saved` or `Flow saved (N flows)`', schema: a.flowSavedAnswer, contentType: 'text/plain', headers: { 'X-Event-Count': 'the number of flows stored' } },
    },
  },
  ingestRoute('/ingest', 'Ingest correlation signals', signalSchema, {
    telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40,
  }),
  ingestRoute('/v1/ingest/events', 'Ingest metric events', metricEventSchema, {
    service: 'edge', metric: 'latency_ms', value: 120, region: 'us-east-1', environment: 'prod',
  }),
  {
    method: 'get', path: '/v1/incidents', summary: 'List incidents, newest first_seen first', tag: 'Incidents', access: 'workspace',
    permission: 'read', query: incidents.listSchema, responses: { 200: json('a page of incidents', a.pageOf(a.incidentAnswer)) },
  },
  {
    method: 'get', path: '/v1/incidents/{id}', summary: 'One incident', tag: 'Incidents', access: 'workspace', permission: 'read',
    params: { id }, responses: { 200: json('the incident, with the attack a rate detector saw', incidentWithAttackAnswer) },
  },
  {
    method: 'get', path: '/v1/incidents/{id}/signals', summary: "An incident's signals in event-time order", tag: 'Incidents', access: 'workspace',
    permission: 'read', params: { id }, query: incidents.signalsSchema,
    responses: { 200: json("a page of the incident's signals", a.pageOf(a.incidentSignalAnswer)) },
  },
  ...(['acknowledge', 'resolve'] as const).map(
    (action): RouteContract => ({
      method: 'post', path: `/v1/incidents/{id}/${action}`, summary: `${action[0]!.toUpperCase()}${action.slice(1)} an incident`,
      tag: 'Incidents', access: 'workspace', permission: 'incidents:manage', params: { id }, errors: [409],
      responses: { 200: json('the incident', a.incidentAnswer) },
    }),
  ),
  {
    method: 'get', path: '/v1/telemetry/flows', summary: 'Flows, newest first', tag: 'Analytics', access: 'workspace', permission: 'read',
    query: flows.flowsSchema, extraQuery: flowFilters, errors: [422], responses: { 200: json('a page of flows', a.pageOf(a.flowAnswer)) },
  },
  {
    method: 'get', path: '/v1/telemetry/flows/top', summary: 'Top talkers', tag: 'Analytics', access: 'workspace', permission: 'read',
    query: flows.topSchema, extraQuery: flowFilters, errors: [422], responses: { 200: { ...json('the ranked rows', topAnswer), csv: 'a row per ranked key (a sankey path with 2 or 3 `by`): its dimensions, then the metric(s), flows, rate and the previous_ fields' } },
  },
  {
    method: 'get', path: '/v1/telemetry/flows/series', summary: 'Traffic series', tag: 'Analytics', access: 'workspace', permission: 'read',
    query: flows.seriesSchema, extraQuery: flowFilters, errors: [422], responses: { 200: { ...json('one series per key', flowSeriesAnswer), csv: 'a row per series and step: t, the split_by key, bps, pps, bytes, packets, fps, flows, rate, and the previous_ fields' } },
  },
  {
    method: 'get', path: '/v1/telemetry/flows/complete', summary: "Completion of the filter language: dimension names and keywords, or a dimension's recent values",
    tag: 'Analytics', access: 'workspace', permission: 'read', query: complete.completeSchema, errors: [422],
    responses: { 200: json('the items, at most limit', completionAnswer) },
  },
  {
    method: 'get', path: '/v1/telemetry/metrics/series', summary: 'A metric series', tag: 'Analytics', access: 'workspace', permission: 'read',
    query: telemetry.seriesSchema, errors: [422], responses: { 200: { ...json('averages per step', a.metricSeriesAnswer), csv: 'a row per step: t, avg, samples' } },
  },
];
