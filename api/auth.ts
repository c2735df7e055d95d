import type { Context, Next } from 'koa';
import { forbidden } from '../core/errors';
import { roleAllows, type Permission } from '../core/roles';
import type { KeysService, Principal } from '../application/keys-service';

export interface AuthState {
  principal: Principal;
}

export function authenticate(keys: KeysService) {
  return async function authenticateRequest(ctx: Context, next: Next): Promise<void> {
    (ctx.state as AuthState).principal = await keys.authenticate(ctx.get('authorization') || undefined);
    await next();
  };
}

export const principalOf = (ctx: Context): Principal => (ctx.state as AuthState).principal;

/**
 * Route guard. The platform admin passes `keys:manage` and `audit:read`
 * (it administers every workspace) but holds no workspace of its own.
 */
export function requirePermission(permission: Permission) {
  return async function checkPermission(ctx: Context, next: Next): Promise<void> {
    const principal = principalOf(ctx);
    const allowed =
      principal.kind === 'platform_admin'
        ? permission === 'keys:manage' || permission === 'audit:read'
        : roleAllows(principal.role, permission);
    if (!allowed) {
      throw forbidden(
        principal.kind === 'platform_admin'
          ? 'the platform admin key holds no workspace; mint a workspace key for this call'
          : `role ${principal.role} lacks permission ${permission}`,
      );
    }
    await next();
  };
}

/** Route guard for platform operations (no workspace's data): the platform admin key only. */
export function requirePlatformAdmin() {
  return async function checkPlatformAdmin(ctx: Context, next: Next): Promise<void> {
    const principal = principalOf(ctx);
    if (principal.kind !== 'platform_admin') throw forbidden('only the platform admin key may make this call');
    await next();
  };
}

/** The org a workspace key belongs to; every tenant-scoped query is built from it. */
export function orgOf(ctx: Context): string {
  const principal = principalOf(ctx);
  if (principal.kind !== 'workspace') throw forbidden('the platform admin key holds no workspace');
  return principal.orgId;
}
