import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { AppError, forbidden } from '../core/errors';
import type { SessionRecord } from '../core/session';
import type { SessionPrincipals } from '../application/identity/session-principals';
import { isSessionSecret, type SessionService } from '../application/identity/session-service';
import type { ConsoleLedger } from '../application/identity/console-ledger';
import type { OidcSignIn } from '../application/identity/oidc-sign-in';
import type { Counter } from 'prom-client';
import { clearCookie, cookiesOf, sessionCookie } from './cookies';

/** Console sign-in and sessions: key sessions always, single sign-on when an OpenID provider is configured. */
export interface ConsoleAuth {
  sessions: SessionService;
  principals: SessionPrincipals;
  /** Single sign-on; undefined when OIDC_ISSUER_URL is unset. */
  oidc?: OidcSignIn;
  /** The console's public origin (OIDC_REDIRECT_BASE_URL's), which unsafe calls made with the cookie may come from. */
  publicOrigin?: string;
  /** People's sign-ins (and refused ones) in the platform's ledger. */
  ledger?: ConsoleLedger;
  /** Requests refused for their session, by reason (ended, malformed, csrf_token, origin). */
  refusals: Counter<'reason'>;
}

export interface CurrentSession {
  id: string;
  record: SessionRecord;
}

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function refuse(auth: ConsoleAuth, reason: string, error: AppError): never {
  auth.refusals.inc({ reason });
  throw error;
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Whether a page of this service made the call: its Origin is the console's
 * public origin, or names the very host the request was sent to. A page of
 * another site cannot make a browser send an Origin that is not its own.
 */
export function isOwnOrigin(ctx: Context, publicOrigin: string | undefined): boolean {
  const origin = ctx.get('origin');
  if (!origin || origin === 'null') return false;
  if (publicOrigin && origin === publicOrigin) return true;
  try {
    return new URL(origin).host === ctx.host;
  } catch {
    return false;
  }
}

/**
 * A call that changes something, made with the session cookie, must carry the
 * session's CSRF token (which only the console's own pages learn, from
 * GET /auth/session) and come from the service's own origin. SameSite=Strict
 * already keeps the cookie off other sites' requests; these two checks hold
 * where it does not (an old browser, a sibling site on the same domain).
 */
function checkUnsafeCall(ctx: Context, auth: ConsoleAuth, record: SessionRecord): void {
  const token = ctx.get('x-csrf-token');
  if (!token || !sameText(token, record.csrf)) {
    refuse(auth, 'csrf_token', forbidden('a call made with the console session needs the X-CSRF-Token header GET /auth/session answers'));
  }
  if (!isOwnOrigin(ctx, auth.publicOrigin)) refuse(auth, 'origin', forbidden("a call made with the console session must come from the console's own origin"));
}

/** The request's console session, checked (unsafe methods need the CSRF token and the own origin); undefined without the cookie. */
export async function currentSession(ctx: Context, auth: ConsoleAuth): Promise<CurrentSession | undefined> {
  const id = cookiesOf(ctx).get(sessionCookie);
  if (id === undefined) return undefined;
  if (!isSessionSecret(id)) {
    clearCookie(ctx, sessionCookie, 'Strict');
    return refuse(auth, 'malformed', new AppError('UNAUTHORIZED', 'the console session cookie is not one this service set; sign in again'));
  }
  const found = await auth.sessions.find(id);
  if (!found) {
    clearCookie(ctx, sessionCookie, 'Strict');
    return refuse(auth, 'ended', new AppError('UNAUTHORIZED', 'the console session ended (signed out or timed out); sign in again'));
  }
  if (unsafeMethods.has(ctx.method)) checkUnsafeCall(ctx, auth, found.record);
  return { id, record: found.record };
}

/** The session a route of /auth needs: 401 without one. */
export async function requireSession(ctx: Context, auth: ConsoleAuth): Promise<CurrentSession> {
  const session = await currentSession(ctx, auth);
  if (!session) return refuse(auth, 'missing', new AppError('UNAUTHORIZED', 'no console session: sign in first'));
  return session;
}
