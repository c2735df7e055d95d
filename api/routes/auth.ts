import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, forbidden, notFound, validationError } from '../../core/errors';
import { sessionEndsAt, type SessionRecord } from '../../core/session';
import { iso } from '../../core/time';
import type { OidcSignIn } from '../../application/identity/oidc-sign-in';
import { sessionCredentialId } from '../../application/identity/session-principals';
import { isSessionSecret } from '../../application/identity/session-service';
import { principalFromHeader, recordAuthFailure, type AuthGuard } from '../auth';
import { readBody, readOptionalJson } from '../body';
import { callbackQuery, keySessionBody, logoutBody, workspaceBody } from '../contracts/routes-auth';
import { clearCookie, cookiesOf, loginCookie, sessionCookie, setCookie } from '../cookies';
import { isOwnOrigin, requireSession, type ConsoleAuth } from '../session-auth';
import { parseOrThrow, refuseQuery, singleQuery } from '../validation';

/** What the /auth routes need: the console's sessions, and the key check (with its throttle) for key sessions. */
export interface AuthRouteDeps {
  console: ConsoleAuth;
  guard: AuthGuard;
  bodyLimitBytes: number;
}

/** The session as the console reads it: never the provider's tokens, never the key. */
async function sessionView(auth: ConsoleAuth, record: SessionRecord) {
  const held = await auth.principals.workspacesOf(record);
  const chosen = held.find((w) => w.orgId === record.org_id);
  const limits = auth.sessions.limits;
  return {
    kind: record.kind,
    person: record.kind === 'person' ? record.person : null,
    key_id: record.kind === 'key' ? record.key_id : null,
    workspaces: held.map((w) => ({ org_id: w.orgId, roles: w.roles })),
    workspace: chosen ? chosen.orgId : null,
    roles: chosen ? chosen.roles : [],
    csrf_token: record.csrf,
    idle_expires_at: iso(sessionEndsAt(record, limits)),
    expires_at: iso(record.created_at + limits.maxMs),
  };
}

/** A redirect whose body says where to in plain text, whatever the client accepts (Koa's own answers HTML to browsers). */
function redirectTo(ctx: Context, url: string, status: 302 | 303): void {
  ctx.redirect(url);
  ctx.status = status;
  ctx.type = 'text/plain';
  ctx.body = `Redirecting to ${url}`;
}

/**
 * Whether the request carries a live session, without refusing it: the
 * console asks before it reads the session, so a browser signed out loads the
 * sign-in page without a 401 in its console. A stale cookie is cleared.
 */
async function hasSession(ctx: Context, auth: ConsoleAuth): Promise<boolean> {
  const id = cookiesOf(ctx).get(sessionCookie);
  if (id === undefined) return false;
  if (isSessionSecret(id) && (await auth.sessions.find(id))) return true;
  clearCookie(ctx, sessionCookie, 'Strict');
  return false;
}

/** The session cookie: Strict, and kept no longer than the session's absolute time-out. */
async function setSessionCookie(ctx: Context, auth: ConsoleAuth, id: string): Promise<void> {
  // A new sign-in ends the session the browser held, which would otherwise live on, unseen, until it timed out (when the
  // browser sends its cookie: a key sign-in does, the provider's cross-site redirect to the callback does not).
  const previous = cookiesOf(ctx).get(sessionCookie);
  if (isSessionSecret(previous) && previous !== id) await auth.sessions.close(previous);
  setCookie(ctx, sessionCookie, id, { sameSite: 'Strict', maxAgeSeconds: Math.floor(auth.sessions.limits.maxMs / 1000) });
}

const singleSignOn = (auth: ConsoleAuth): OidcSignIn => {
  if (!auth.oidc) throw notFound('single sign-on (OIDC_ISSUER_URL is not set)');
  return auth.oidc;
};

/** GET /auth/login: the browser goes to the provider; the sign-in under way is kept server side, its id in a Lax cookie. */
async function startSignIn(ctx: Context, auth: ConsoleAuth): Promise<void> {
  refuseQuery(ctx.query);
  const { url, attempt } = await singleSignOn(auth).authorizationRequest();
  const loginId = await auth.sessions.saveLogin(attempt);
  setCookie(ctx, loginCookie, loginId, { sameSite: 'Lax', maxAgeSeconds: 600 });
  redirectTo(ctx, url, 302);
}

/**
 * GET /auth/callback: the provider's answer, checked against the sign-in this
 * browser began (its Lax cookie), the code exchanged and the ID token checked,
 * the person's groups mapped to workspaces; a person whose groups map to none
 * gets a 403 and no session. The session cookie is SameSite=Strict, and the
 * person arrives from the provider's site: chromium (156, tried) sends no
 * Strict cookie on this request nor on the redirect to `/` that follows
 * (Sec-Fetch-Site: cross-site through the chain), but keeps the cookie set
 * here, and the console's own requests from that page (its script, its
 * fetches: same-origin) carry it. The console page needs no cookie to load,
 * so a plain redirect is enough and no page that navigates on is needed.
 */
async function finishSignIn(ctx: Context, auth: ConsoleAuth): Promise<void> {
  const params = parseOrThrow(callbackQuery, singleQuery(ctx.query), 'query');
  const oidc = singleSignOn(auth);
  const loginId = cookiesOf(ctx).get(loginCookie);
  clearCookie(ctx, loginCookie, 'Lax');
  const attempt = isSessionSecret(loginId) ? await auth.sessions.takeLogin(loginId) : undefined;
  if (!attempt) throw validationError('no sign-in under way in this browser (or it took longer than 10 minutes): start again at /auth/login');
  if (params.error) throw new AppError('UNAUTHORIZED', `the OpenID provider refused the sign-in: ${params.error}`);
  const signedIn = await oidc.callback(params, attempt);
  const held = await auth.principals.workspacesOfGroups(signedIn.groups);
  if (held.length === 0) {
    const refusal = forbidden(`${signedIn.person.name || signedIn.person.subject} signed in, but none of their groups is mapped to a workspace: a workspace admin maps groups to roles (PUT /v1/sso/group-mappings)`);
    await auth.ledger?.refused(refusal, signedIn.person);
    throw refusal;
  }
  const orgId = held.length === 1 ? held[0]!.orgId : null;
  const { id } = await auth.sessions.open({ kind: 'person', person: signedIn.person, groups: signedIn.groups, orgId });
  await auth.ledger?.signedIn(sessionCredentialId(id), signedIn.person, held.map((w) => w.orgId));
  await setSessionCookie(ctx, auth, id);
  redirectTo(ctx, '/', 303);
}

/**
 * A browser that comes back from the provider is a person looking at a page:
 * a refused sign-in takes them to the console's sign-in page, which says why
 * (in the URL's fragment, which no server receives). Any other client gets
 * the error as JSON.
 */
async function finishSignInOrShow(ctx: Context, deps: AuthRouteDeps): Promise<void> {
  const auth = deps.console;
  try {
    await finishSignIn(ctx, auth);
  } catch (err) {
    if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
      // Counted against the client's address first, as a bad key is: a client failing in a loop writes at most its allowance.
      recordAuthFailure(ctx, deps.guard);
      await auth.ledger?.refused(err, null);
    }
    if (!(err instanceof AppError) || ctx.accepts('json', 'html') !== 'html') throw err;
    auth.refusals.inc({ reason: 'sign_in_failed' });
    redirectTo(ctx, `/#/sign-in-failed?reason=${encodeURIComponent(err.message)}`, 303);
  }
}

/**
 * POST /auth/key-session: the key sign-in becomes a session, so the console
 * keeps no key where a script could read it. Only from the console's own
 * origin: another site must not sign a browser in with its key (login CSRF).
 */
async function openKeySession(ctx: Context, deps: AuthRouteDeps): Promise<void> {
  if (!isOwnOrigin(ctx, deps.console.publicOrigin)) {
    deps.console.refusals.inc({ reason: 'origin' });
    throw forbidden("a key session is opened from the console's own origin only");
  }
  const body = parseOrThrow(keySessionBody, (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value, 'key session');
  const principal = await principalFromHeader(ctx, deps.guard, `Bearer ${body.key}`);
  // A person's bearer token is no key: people open their session through the provider (GET /auth/login).
  if (principal.kind === 'workspace' && principal.via !== 'api_key') throw validationError('key: an API key; people sign in with single sign-on', [{ path: 'key', message: 'an API key (ntk_…)' }]);
  const orgId = principal.kind === 'workspace' ? principal.orgId : null;
  const { id, record } = await deps.console.sessions.open({ kind: 'key', keyId: principal.keyId, keyCheck: deps.guard.keys.keyCheckOf(body.key), orgId });
  await setSessionCookie(ctx, deps.console, id);
  ctx.status = 201;
  ctx.body = await sessionView(deps.console, record);
}

async function chooseWorkspace(ctx: Context, deps: AuthRouteDeps): Promise<void> {
  const auth = deps.console;
  const session = await requireSession(ctx, auth);
  const body = parseOrThrow(workspaceBody, (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value, 'workspace');
  const held = await auth.principals.workspacesOf(session.record);
  if (!held.some((w) => w.orgId === body.org_id)) throw forbidden(`this session holds no role in workspace ${body.org_id}`);
  const record = await auth.sessions.choose(session.id, body.org_id);
  if (!record) throw new AppError('UNAUTHORIZED', 'the console session ended (signed out or timed out); sign in again');
  ctx.body = await sessionView(auth, record);
}

/** POST /auth/logout: the session ends here and, where the provider offers it, the browser is sent to end it there too. */
async function logout(ctx: Context, deps: AuthRouteDeps): Promise<void> {
  const auth = deps.console;
  const session = await requireSession(ctx, auth);
  parseOrThrow(logoutBody, await readOptionalJson(ctx, deps.bodyLimitBytes), 'logout');
  const record = await auth.sessions.close(session.id);
  clearCookie(ctx, sessionCookie, 'Strict');
  ctx.body = { logout_url: record?.kind === 'person' && auth.oidc ? await auth.oidc.logoutUrl() : null };
}

export function registerAuthRoutes(router: Router, deps: AuthRouteDeps): void {
  router.get('/auth/config', async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = { single_sign_on: Boolean(deps.console.oidc), signed_in: await hasSession(ctx, deps.console) };
  });
  router.get('/auth/login', (ctx) => startSignIn(ctx, deps.console));
  router.get('/auth/callback', (ctx) => finishSignInOrShow(ctx, deps));
  router.post('/auth/key-session', (ctx) => openKeySession(ctx, deps));
  router.get('/auth/session', async (ctx) => {
    refuseQuery(ctx.query);
    const session = await requireSession(ctx, deps.console);
    ctx.body = await sessionView(deps.console, session.record);
  });
  router.post('/auth/workspace', (ctx) => chooseWorkspace(ctx, deps));
  router.post('/auth/logout', (ctx) => logout(ctx, deps));
}
