import { freePort } from '../../engines/local-process';
import type { ConsoleSessionView } from './api-types';
import { sessionCookieName, setCookies } from './console-sign-in';
import { startTestOidcProvider, type TestOidcProvider, type TestUser } from './oidc-provider';
import { startTestStack, type TestStack } from './test-stack';

/** A request as the console makes it: the session cookie, the CSRF token and the console's Origin (null: none). */
export interface ConsoleCall {
  session?: string;
  csrf?: string;
  origin?: string | null;
  body?: unknown;
}

export interface ConsoleStack {
  t: TestStack;
  provider: TestOidcProvider;
  /** The console's origin: the stack's URL, which the provider sends people back to. */
  origin: string;
  asConsole: <T = unknown>(method: string, route: string, opts?: ConsoleCall) => Promise<{ status: number; res: Response; body: T }>;
  /** A key session opened with `key`: its cookie's value and the session as the API answered it. */
  keySession: (key: string) => Promise<{ session: string; view: ConsoleSessionView }>;
  stop: () => Promise<void>;
}

export interface ConsoleStackOptions {
  /**
   * The name the console is reached by. `localhost` puts it on another site
   * than the provider (127.0.0.1), as a real provider is: the browser then
   * treats the provider's redirect back as a cross-site navigation.
   */
  host?: '127.0.0.1' | 'localhost';
  /** More settings of the stack (its roles, above all). */
  env?: Record<string, string>;
}

/**
 * A whole stack with single sign-on at the tests' OpenID provider: the stack
 * listens on a port chosen first, so the provider knows the console's
 * redirect URI (`<origin>/auth/callback`) and its way back after logout.
 */
export async function startConsoleStack(users: TestUser[], options: ConsoleStackOptions = {}): Promise<ConsoleStack> {
  const port = await freePort();
  const origin = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const provider = await startTestOidcProvider({ users, redirectUris: [`${origin}/auth/callback`], postLogoutRedirectUris: [`${origin}/`] });
  const t = await startTestStack('chdb', {
    PORT: String(port),
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_REDIRECT_BASE_URL: origin,
    OIDC_AUDIENCE: provider.audience,
    ...options.env,
  });
  const asConsole = async <T>(method: string, route: string, opts: ConsoleCall = {}) => {
    const headers: Record<string, string> = {};
    if (opts.session) headers.cookie = `${sessionCookieName}=${opts.session}`;
    if (opts.csrf) headers['x-csrf-token'] = opts.csrf;
    if (opts.origin !== null) headers.origin = opts.origin ?? origin;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${t.url}${route}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, res, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const keySession = async (key: string) => {
    const opened = await asConsole<ConsoleSessionView>('POST', '/auth/key-session', { body: { key } });
    if (opened.status !== 201) throw new Error(`POST /auth/key-session answered ${opened.status}`);
    return { session: setCookies(opened.res).get(sessionCookieName)!.value, view: opened.body };
  };
  const stop = async () => {
    await t.stop();
    await provider.stop();
  };
  return { t, provider, origin, asConsole, keySession, stop };
}
