import type Router from '@koa/router';
import { permissionsOfRoles } from '../../core/roles';
import { principalOf } from '../auth';
import { refuseQuery } from '../validation';

/**
 * The caller's own identity and permissions, so a client (the browser
 * console) shows what it may do instead of learning it from 403s, and whose
 * name it signs with. Any valid credential may ask; the secret is never echoed.
 */
export function registerWhoamiRoutes(router: Router): void {
  router.get('/v1/whoami', (ctx) => {
    refuseQuery(ctx.query);
    const principal = principalOf(ctx);
    ctx.body =
      principal.kind === 'platform_admin'
        ? { kind: 'platform_admin', key_id: principal.keyId, org_id: null, role: null, roles: [], person: null, via: 'api_key', permissions: ['keys:manage', 'audit:read'] }
        : {
            kind: 'workspace',
            key_id: principal.keyId,
            org_id: principal.orgId,
            // A key holds exactly one role; a person signed in may hold several, and then `role` names none.
            role: principal.via === 'api_key' && principal.roles.length === 1 ? principal.roles[0] : null,
            roles: principal.roles,
            person: principal.person,
            via: principal.via,
            permissions: permissionsOfRoles(principal.roles),
          };
  });
}
