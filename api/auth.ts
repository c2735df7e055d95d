import type { Context, Next } from 'koa';
import { AppError, forbidden, ssoRequired, validationError } from '../core/errors';
import { orgIdSchema } from '../core/ids';
import { clientAddress, throttleKeyOf, type TrustedProxies } from '../core/client-address';
import { rolesAllow, type Permission } from '../core/roles';
import type { Principal } from '../core/principal';
import type { AuthThrottle } from '../application/auth-throttle';
import { actingAs } from '../application/acting-person';
import type { KeysService } from '../application/keys-service';
import { isSignInFailure, looksLikeJwt, type BearerSignIn } from '../application/identity/bearer-sign-in';
import { workspaceHeader } from '../application/identity/person-access';
import { currentSession, type ConsoleAuth } from './session-auth';

export interface AuthState {
  principal: Principal;
}

/** What checks a credential: the keys, the throttle of clients that fail too often, and the console's sessions. */
export interface AuthGuard {
  keys: KeysService;
  throttle: AuthThrottle;
  trustedProxies: TrustedProxies;
  /** The console's sessions: a request without an Authorization header may carry the session cookie instead. */
  console?: ConsoleAuth;
  /** People's bearer tokens (JWTs of the OpenID provider); absent when single sign-on is off. */
  people?: BearerSignIn;
  /** Whether the platform admin requires single sign-on of the workspace's people: then their API keys are refused. */
  ssoRequired?: (orgId: string) => Promise<boolean>;
}

/** A person's API key in a workspace that requires single sign-on is refused; service keys, bearer tokens and sessions pass. */
async function refuseKeysOfPeopleWhereSsoRequired(principal: Principal, guard: AuthGuard): Promise<void> {
  if (principal.kind !== 'workspace' || principal.via !== 'api_key' || principal.person === null) return;
  if (await guard.ssoRequired?.(principal.orgId)) throw ssoRequired(principal.orgId);
}

/** The workspace a person's bearer token asks to act in, from X-Nettel-Workspace. */
function chosenWorkspace(ctx: Context): string | undefined {
  const value = ctx.get(workspaceHeader);
  if (value === '') return undefined;
  if (!orgIdSchema.safeParse(value).success) throw validationError(`invalid ${workspaceHeader}`, [{ path: workspaceHeader, message: 'an org id: 1-64 letters, digits, _ or -' }]);
  return value;
}

/** A person's bearer token (anything not an API key that reads as a JWT) goes to single sign-on; the rest to the keys. */
function credentialOf(ctx: Context, guard: AuthGuard, header: string | undefined): Promise<Principal> {
  const token = /^Bearer (\S+)$/i.exec(header?.trim() ?? '')?.[1];
  if (guard.people && token && looksLikeJwt(token)) return guard.people.authenticate(token, () => chosenWorkspace(ctx));
  return guard.keys.authenticate(header);
}

/**
 * The request's principal: from its Authorization header, or, without one,
 * from the console's session cookie (whose unsafe calls need the CSRF token).
 * A key or bearer token is never a cookie, so a request that carries one is
 * no cross-site forgery and needs no CSRF token.
 */
export async function principalFromRequest(ctx: Context, guard: AuthGuard): Promise<Principal> {
  const header = ctx.get('authorization') || undefined;
  if (!header && guard.console) {
    const session = await currentSession(ctx, guard.console);
    if (session) {
      // A key session is the key: where single sign-on is required, a person's key is refused through the console too.
      const principal = await guard.console.principals.principalOf(session);
      await refuseKeysOfPeopleWhereSsoRequired(principal, guard);
      return principal;
    }
  }
  return principalFromHeader(ctx, guard, header);
}

/**
 * The principal of an Authorization header. A valid credential always passes, whatever its
 * client address did: behind a proxy that is not trusted, or one shared by
 * many clients, one client's failures must not lock the others out. A bad
 * credential is 401 (counted as a failure of its address), or 429 once its
 * address has used up its failures.
 */
export async function principalFromHeader(ctx: Context, guard: AuthGuard, header: string | undefined): Promise<Principal> {
  try {
    const principal = await credentialOf(ctx, guard, header);
    await refuseKeysOfPeopleWhereSsoRequired(principal, guard);
    return principal;
  } catch (err) {
    if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
      const address = recordAuthFailure(ctx, guard);
      if (isSignInFailure(err)) await guard.people?.recordFailure(err, address);
    }
    throw err;
  }
}

/** A failed authentication of the request's client: 429 once its address used up its failures; else its address. */
export function recordAuthFailure(ctx: Context, guard: AuthGuard): string {
  const address = clientAddress(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for') || undefined, guard.trustedProxies);
  const client = throttleKeyOf(address);
  guard.throttle.check(client);
  guard.throttle.recordFailure(client);
  return address;
}

export function authenticate(guard: AuthGuard) {
  return async function authenticateRequest(ctx: Context, next: Next): Promise<void> {
    const principal = await principalFromRequest(ctx, guard);
    (ctx.state as AuthState).principal = principal;
    // Audit entries the request appends name its person (application/acting-person.ts).
    await actingAs(principal, next);
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
        : rolesAllow(principal.roles, permission);
    if (!allowed) {
      throw forbidden(
        principal.kind === 'platform_admin'
          ? 'the platform admin key holds no workspace; mint a workspace key for this call'
          : `${rolesNamed(principal.roles)} lacks permission ${permission}`,
      );
    }
    await next();
  };
}

function rolesNamed(held: readonly string[]): string {
  if (held.length === 0) return 'no role';
  return held.length === 1 ? `role ${held[0]}` : `roles ${held.join(', ')}`;
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
