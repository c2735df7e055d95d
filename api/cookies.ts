import type { Context } from 'koa';

/**
 * The console's two cookies. `__Host-` binds each to this host and path `/`
 * (the browser refuses one set with a Domain, without Secure, or under
 * another path), so a sibling subdomain cannot plant or shadow them. Both are
 * HttpOnly: no script of the page, nor one injected into it, reads them.
 */
export const sessionCookie = '__Host-nettel_session';
/**
 * The sign-in under way. SameSite=Lax, not Strict: the provider sends the
 * browser back to /auth/callback from its own site, and a Strict cookie
 * would not ride on that navigation, so the callback could not tell which
 * browser began the sign-in (a login CSRF would go unnoticed).
 */
export const loginCookie = '__Host-nettel_login';

/** The cookies a request carries, by name (the first of a name wins, as browsers send the most specific first). */
export function cookiesOf(ctx: Context): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!found.has(name)) found.set(name, part.slice(at + 1).trim());
  }
  return found;
}

export interface CookieOptions {
  sameSite: 'Strict' | 'Lax';
  /** Seconds the browser keeps it; unset: until the browser closes. 0 deletes it. */
  maxAgeSeconds?: number;
}

/**
 * Sets a cookie: always Secure, HttpOnly and Path=/. Secure on plain http
 * still works on loopback: chromium (156, tried) keeps Secure and `__Host-`
 * cookies that http://127.0.0.1 and http://localhost set, as secure
 * contexts, which is how the tests run; anywhere else the console must be
 * served over https.
 */
export function setCookie(ctx: Context, name: string, value: string, options: CookieOptions): void {
  const attributes = [`${name}=${value}`, 'Path=/', 'Secure', 'HttpOnly', `SameSite=${options.sameSite}`];
  if (options.maxAgeSeconds !== undefined) attributes.push(`Max-Age=${options.maxAgeSeconds}`);
  ctx.append('Set-Cookie', attributes.join('; '));
}

export const clearCookie = (ctx: Context, name: string, sameSite: CookieOptions['sameSite']) => setCookie(ctx, name, '', { sameSite, maxAgeSeconds: 0 });
