import { createHash, randomBytes } from 'node:crypto';

/** What a person gets from the provider at the end of a sign-in. */
export interface PersonTokens {
  access_token: string;
  id_token: string;
  refresh_token?: string;
  expires_in: number;
  token_type: string;
  scope?: string;
}

export interface SignInRequest {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** The person's login on the provider's page (their subject). */
  subject: string;
}

interface StoredCookie {
  value: string;
  path: string;
}

/**
 * The cookies of one browser, by the rules that matter on loopback: a cookie
 * goes back only under its path (the provider scopes its interaction cookies
 * to `/interaction/<uid>` and `/auth/<uid>`), and an empty value deletes it.
 */
export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      const pathAttribute = attributes.find((a) => a.toLowerCase().startsWith('path='));
      const cookiePath = pathAttribute ? pathAttribute.slice(5) : '/';
      const expired = attributes.some((a) => /^expires=thu, 01 jan 1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(`${cookiePath} ${name}`);
      else this.cookies.set(`${cookiePath} ${name}`, { value, path: cookiePath });
    }
  }

  headerFor(url: URL): string {
    const pairs: string[] = [];
    for (const [key, cookie] of this.cookies) {
      if (url.pathname === cookie.path || url.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`) || cookie.path === '/') {
        pairs.push(`${key.slice(key.indexOf(' ') + 1)}=${cookie.value}`);
      }
    }
    return pairs.join('; ');
  }
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** One request of the browser: no redirect followed, cookies kept; answers the response and where it points. */
export async function browse(jar: CookieJar, url: URL, init: RequestInit = {}): Promise<{ response: Response; location?: URL }> {
  const headers = new Headers(init.headers);
  const cookie = jar.headerFor(url);
  if (cookie) headers.set('cookie', cookie);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.store(response);
  const location = response.headers.get('location');
  return { response, location: location ? new URL(location, url) : undefined };
}

/** Follows redirects (with GET) until one leaves the provider or a page is shown. */
export async function follow(jar: CookieJar, start: { response: Response; location?: URL }, issuer: URL): Promise<{ response: Response; location?: URL }> {
  let step = start;
  for (let hops = 0; step.location && step.location.origin === issuer.origin; hops += 1) {
    if (hops > 10) throw new Error('the OpenID provider redirected more than 10 times');
    await step.response.arrayBuffer();
    step = await browse(jar, step.location);
  }
  return step;
}

/** An authorization request with PKCE, as the console makes one: where to send the browser, and what finishing it needs. */
export interface AuthorizationRequest {
  url: URL;
  verifier: string;
  state: string;
  tokenEndpoint: string;
}

export async function authorizationRequest(request: Omit<SignInRequest, 'subject'>): Promise<AuthorizationRequest> {
  const discovery = (await (await fetch(`${request.issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string; token_endpoint: string };
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(12));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    scope: 'openid profile email groups',
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
    state,
    nonce: base64url(randomBytes(12)),
  }).toString();
  return { url, verifier, state, tokenEndpoint: discovery.token_endpoint };
}

/** The code the provider sent back to the redirect URI, checked against the request's state. */
export function codeOf(callback: URL | undefined, started: AuthorizationRequest): string {
  const code = callback?.searchParams.get('code');
  if (!callback || !code || callback.searchParams.get('state') !== started.state) {
    throw new Error(`the OpenID provider sent no code back: ${callback?.search ?? 'no redirect'}`);
  }
  return code;
}

/**
 * Signs a person in at the provider as a browser would, without one:
 * authorization request with PKCE, the provider's login form posted with the
 * person's login, then the code exchanged at the token endpoint.
 */
export async function signInOverHttp(request: SignInRequest): Promise<PersonTokens> {
  const issuer = new URL(request.issuer);
  const started = await authorizationRequest(request);
  const jar = new CookieJar();
  const loginPage = await follow(jar, await browse(jar, started.url), issuer);
  const html = await loginPage.response.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`the OpenID provider showed no login form (${loginPage.response.status}): ${html.slice(0, 300)}`);
  const submitted = await browse(jar, new URL(action.replace(/&amp;/g, '&'), loginPage.response.url || issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ prompt: 'login', login: request.subject, password: 'any' }).toString(),
  });
  const back = await follow(jar, submitted, issuer);
  return exchangeCode(started.tokenEndpoint, request, codeOf(back.location, started), started.verifier);
}

export async function exchangeCode(tokenEndpoint: string, request: Omit<SignInRequest, 'subject'>, code: string, verifier: string): Promise<PersonTokens> {
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: request.redirectUri, code_verifier: verifier }).toString(),
  });
  const body = (await response.json()) as PersonTokens & { error?: string; error_description?: string };
  if (!response.ok) throw new Error(`the token endpoint refused the code (${response.status}): ${body.error} ${body.error_description ?? ''}`);
  return body;
}

/** The provider's login page as chromium shows it (Playwright's Page, or anything that fills and clicks the same way). */
export interface LoginPage {
  fill(selector: string, value: string): Promise<void>;
  click(selector: string): Promise<void>;
}

/** Signs a person in on the provider's own login page in a browser: its form takes any password for a known login. */
export async function fillProviderLogin(page: LoginPage, subject: string): Promise<void> {
  await page.fill('input[name="login"]', subject);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
}
