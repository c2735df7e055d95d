import { z } from 'zod';
import { groupMappingSchema } from '../../core/group-mappings';
import * as sso from '../routes/sso';
import { timeOrNull } from './answers';
import type { RouteContract } from './contract';
import { noQuery } from '../validation';

/** Single sign-on: a workspace's group mappings, and whether the platform admin requires single sign-on of its people. */
const json = (description: string, schema: z.ZodType) => ({ description, schema });
const tag = 'Single sign-on';

export const groupMappingsAnswer = z
  .object({ version: z.number().int(), mappings: z.array(groupMappingSchema), updated_at: timeOrNull, updated_by: z.string().nullable() })
  .meta({ title: 'GroupMappingsVersion' });

export const ssoRequirementAnswer = z
  .object({ org_id: z.string(), required: z.boolean(), person_keys_from_sign_in: z.boolean(), updated_at: timeOrNull, updated_by: z.string().nullable() })
  .meta({ title: 'SsoRequirement' });

const orgId = z.string().meta({ description: 'the workspace (org id)' });

export const identityContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/sso/group-mappings', summary: "The workspace's group mappings in force", tag, access: 'workspace',
    permission: 'keys:manage', query: noQuery, responses: { 200: json('the version in force (version 0: no group mapped)', groupMappingsAnswer) },
  },
  {
    method: 'put', path: '/v1/sso/group-mappings', summary: 'Replace the group mappings (the next version)', tag, access: 'workspace',
    permission: 'keys:manage', errors: [409],
    body: { schema: sso.mappingsPutSchema, example: { version: 0, mappings: [{ group: 'netops', roles: ['operator'] }, { group: 'noc-leads', roles: ['approver'] }] } },
    responses: { 200: json('the version in force after the change', groupMappingsAnswer) },
  },
  {
    method: 'get', path: '/v1/sso/group-mappings/versions', summary: "Every version of the workspace's group mappings", tag, access: 'workspace',
    permission: 'keys:manage', query: noQuery, responses: { 200: json('the versions, newest first', z.object({ data: z.array(groupMappingsAnswer) })) },
  },
  {
    method: 'get', path: '/v1/workspaces/{org_id}/sso', summary: 'Whether a workspace requires single sign-on of its people', tag,
    access: 'platform-admin', params: { org_id: orgId }, query: noQuery, responses: { 200: json('the requirement', ssoRequirementAnswer) },
  },
  {
    method: 'put', path: '/v1/workspaces/{org_id}/sso', summary: "Require single sign-on of a workspace's people (or no longer)", tag,
    access: 'platform-admin', params: { org_id: orgId }, body: { schema: sso.requirementPutSchema, example: { required: false, person_keys_from_sign_in: true } },
    responses: { 200: json('the requirement now', ssoRequirementAnswer) },
  },
];
