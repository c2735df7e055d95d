import { z } from 'zod';
import * as automations from '../routes/automations';
import { pageOf } from './answers';
import { adminMitigationAnswer, automationAnswer, automationDecisionAnswer, mitigationAnswer } from './automation-answers';
import type { RouteContract } from './contract';

/** Automation runs, the decisions and changes people make to them, and the mitigations announced now. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const id = z.string().meta({ description: 'the automation run id; an id the workspace does not have is 404' });
const tag = 'Automations';

const decisions = (['approve', 'deny'] as const).map(
  (decision): RouteContract => ({
    method: 'post', path: `/v1/automations/{id}/${decision}`, summary: `${decision === 'approve' ? 'Approve' : 'Deny'} a waiting automation run`,
    tag, access: 'workspace', permission: 'approve', params: { id }, errors: [409],
    body: { schema: automations.decisionSchema, example: { comment: 'checked the preview with the NOC' }, optional: true },
    responses: { 202: json('the decision was taken', automationDecisionAnswer) },
  }),
);

export const automationContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/automations', summary: 'List automation runs', tag, access: 'workspace', permission: 'read',
    query: automations.listSchema, responses: { 200: json('a page of runs, newest first', pageOf(automationAnswer)) },
  },
  {
    method: 'get', path: '/v1/automations/{id}', summary: 'One automation run: status, preview, approvals, mitigations', tag, access: 'workspace',
    permission: 'read', params: { id }, responses: { 200: json('the run', automationAnswer) },
  },
  ...decisions,
  {
    method: 'post', path: '/v1/automations/{id}/withdraw', summary: "Withdraw an active run's mitigations now", tag, access: 'workspace',
    permission: 'approve', params: { id }, errors: [409], body: { schema: automations.decisionSchema, example: { comment: 'attack over' }, optional: true },
    responses: { 200: json('the run, withdrawn', automationAnswer) },
  },
  {
    method: 'post', path: '/v1/automations/{id}/extend', summary: "Hold an active run's mitigations longer (a decision, under the policies)", tag,
    access: 'workspace', permission: 'approve', params: { id }, errors: [409],
    body: { schema: automations.extendSchema, example: { minutes: 30, comment: 'still under attack' } },
    responses: { 200: json('the run with its new ends', automationAnswer) },
  },
  {
    method: 'get', path: '/v1/mitigations', summary: 'The mitigations announced now', tag, access: 'workspace', permission: 'read',
    query: z.object({}).strict(), responses: { 200: json('the active mitigations, soonest end first', z.object({ data: z.array(mitigationAnswer) }).meta({ title: 'Mitigations' })) },
  },
  {
    method: 'get', path: '/v1/mitigations/all', summary: 'The mitigations announced now, in every workspace', tag, access: 'platform-admin',
    query: z.object({}).strict(), responses: { 200: json('every active mitigation, soonest end first', z.object({ data: z.array(adminMitigationAnswer) }).meta({ title: 'WorkspaceMitigations' })) },
  },
];
