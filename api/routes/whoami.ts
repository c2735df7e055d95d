import type Router from '@koa/router';
import { permissionsOf } from '../../core/roles';
import { principalOf } from '../auth';
import { refuseQuery } from '../validation';

/**
 * The calling key's own identity and permissions, so a client (the browser
 * console) shows what the key may do instead of learning it from 403s.
 * Any valid key may ask; the secret is never echoed.
 */
export function registerWhoamiRoutes(router: Router): void {
  router.get('/v1/whoami', (ctx) => {
    refuseQuery(ctx.query);
    const principal = principalOf(ctx);
    ctx.body =
      principal.kind === 'platform_admin'
        ? { kind: 'platform_admin', key_id: principal.keyId, org_id: null, role: null, permissions: ['keys:manage', 'audit:read'] }
        : { kind: 'workspace', key_id: principal.keyId, org_id: principal.orgId, role: principal.role, permissions: permissionsOf(principal.role) };
  });
}
