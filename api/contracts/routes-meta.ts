import { z } from 'zod';
import { permissions, roles } from '../../core/roles';
import type { RouteContract } from './contract';
import { credentialKinds, type CredentialKind } from '../../core/principal';
import { personSchema } from './answers';

/** The description of the API itself, its rendered reference, and what the browser console reads. */
export const metaContracts: RouteContract[] = [
  {
    method: 'get', path: '/v1/openapi.json', summary: 'This OpenAPI 3.1 document', tag: 'Operations', access: 'public',
    responses: { 200: { description: 'the document', schema: z.record(z.string(), z.unknown()) } },
  },
  {
    method: 'get', path: '/docs', summary: 'The API reference, rendered (Swagger UI)', tag: 'Operations', access: 'public',
    responses: { 200: { description: 'an HTML page', schema: z.string(), contentType: 'text/html' } },
  },
  {
    method: 'get', path: '/docs/init.js', summary: 'The script that starts the renderer', tag: 'Operations', access: 'public',
    responses: { 200: { description: 'JavaScript', schema: z.string(), contentType: 'text/javascript' } },
  },
  {
    method: 'get', path: '/docs/assets/{file}', summary: "The renderer's files, from the swagger-ui-dist package", tag: 'Operations',
    access: 'public', params: { file: z.string() },
    responses: { 200: { description: 'a file (long-cached)', schema: z.string(), contentType: 'application/octet-stream' } },
  },
  {
    method: 'get', path: '/v1/console-config', summary: 'What the browser console reads before sign-in', tag: 'Operations',
    access: 'public', responses: { 200: { description: 'the configuration', schema: z.object({ temporal_ui_url: z.string().nullable() }) } },
  },
  {
    method: 'get', path: '/v1/whoami', summary: "The caller's identity, person and permissions", tag: 'Keys', access: 'admin-or-workspace',
    responses: {
      200: {
        description: 'the key',
        schema: z.object({
          kind: z.enum(['platform_admin', 'workspace']),
          key_id: z.string(),
          org_id: z.string().nullable(),
          role: z.enum(roles).nullable().describe("a key's one role; null for the platform admin and for a person signed in"),
          roles: z.array(z.enum(roles)).describe('every role the caller holds in its workspace'),
          person: personSchema.nullable().describe('the person behind the credential; null for a service key and the platform admin'),
          via: z.enum(credentialKinds as [CredentialKind, ...CredentialKind[]]).describe('how the caller proved itself'),
          permissions: z.array(z.enum(permissions)),
        }),
      },
    },
  },
];
