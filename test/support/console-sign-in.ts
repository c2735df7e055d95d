import { CookieJar, browse, follow } from './oidc-sign-in';

/** A cookie as a Set-Cookie line gave it: its value and its attributes, lower-cased. */
export interface SetCookie {
  name: string;
  value: string;
  attributes: string[];
}

/** The Set-Cookie lines of a response, by name. */
export function setCookies(response: { headers: Headers }): Map<string, SetCookie> {
  const found = new Map<string, SetCookie>();
  for (const line of response.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';').map((part) => part.trim());
    const at = pair!.indexOf('=');
    found.set(pair!.slice(0, at), { name: pair!.slice(0, at), value: pair!.slice(at + 1), attributes: attributes.map((a) => a.toLowerCase()) });
  }
  return found;
}

export const sessionCookieName = '__Host-nettel_session';

/** What the console's sign-in left: the callback's answer, and the session cookie's value when one was set. */
export interface ConsoleSignIn {
  callback: Response;
  session?: string;
}

/**
 * The console's single sign-on as a browser walks it, without one: GET
 * /auth/login (the sign-in cookie kept), the provider's login page posted
 * with the person's login, then the provider's redirect to /auth/callback
 * followed with the sign-in cookie. `accept` is the callback's Accept header.
 */
export async function signInThroughConsole(apiUrl: string, issuer: string, subject: string, accept = 'application/json'): Promise<ConsoleSignIn> {
  const jar = new CookieJar();
  const start = await browse(jar, new URL('/auth/login', apiUrl));
  if (start.response.status !== 302 || !start.location) throw new Error(`GET /auth/login answered ${start.response.status}: ${await start.response.text()}`);
  const issuerUrl = new URL(issuer);
  const loginPage = await follow(jar, await browse(jar, start.location), issuerUrl);
  const html = await loginPage.response.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`the OpenID provider showed no login form (${loginPage.response.status})`);
  const submitted = await browse(jar, new URL(action.replace(/&amp;/g, '&'), loginPage.response.url || issuerUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ prompt: 'login', login: subject, password: 'any' }).toString(),
  });
  const back = await follow(jar, submitted, issuerUrl);
  if (!back.location || !back.location.pathname.endsWith('/auth/callback')) throw new Error(`the provider did not send the browser back (${back.response.status})`);
  const callback = await browse(jar, back.location, { headers: { accept } });
  return { callback: callback.response, session: setCookies(callback.response).get(sessionCookieName)?.value || undefined };
}
