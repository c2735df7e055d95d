import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { refuseQuery } from './validation';

/**
 * The browser console: its built files (`dist/console`, made by the set-up
 * with Vite) served at `/`, and the unauthenticated configuration it reads
 * before sign-in. The console's routes live in the URL fragment, so the only
 * paths served here are `/`, `/index.html`, the icon and `/assets/*`; every other path,
 * `/v1/…` above all, falls through to the API and its JSON 404.
 */
export interface ConsoleOptions {
  dir: string;
  temporalUiUrl?: string;
}

/** Scripts and styles from this origin only: the console has no inline script or style. */
export const consoleCsp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** A file under `assets/` by its plain name (Vite's hashed names), never a path that climbs out. */
function assetFile(dir: string, requestPath: string): string | undefined {
  const name = requestPath.slice('/assets/'.length);
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.')) return undefined;
  return path.join(dir, 'assets', name);
}

async function sendFile(ctx: Context, file: string, cacheControl: string): Promise<boolean> {
  const stat = await fs.promises.stat(file).catch(() => undefined);
  if (!stat?.isFile()) return false;
  ctx.type = contentTypes[path.extname(file)] ?? 'application/octet-stream';
  ctx.length = stat.size;
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Content-Security-Policy', consoleCsp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = ctx.method === 'HEAD' ? null : fs.createReadStream(file);
  if (ctx.method === 'HEAD') ctx.status = 200;
  return true;
}

export function serveConsole(options: ConsoleOptions) {
  return async function consoleFiles(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      await next();
      return;
    }
    if (ctx.path === '/' || ctx.path === '/index.html') {
      // The page names the hashed assets of this build: browsers must ask again each time.
      if (await sendFile(ctx, path.join(options.dir, 'index.html'), 'no-cache')) return;
    } else if (ctx.path === '/favicon.svg' || ctx.path === '/favicon.ico') {
      // Browsers ask for /favicon.ico whatever the page names: one icon answers both, so no page logs a 404.
      if (await sendFile(ctx, path.join(options.dir, 'favicon.svg'), 'public, max-age=86400')) return;
    } else if (ctx.path.startsWith('/assets/')) {
      const file = assetFile(options.dir, ctx.path);
      if (file && (await sendFile(ctx, file, 'public, max-age=31536000, immutable'))) return;
    }
    await next();
  };
}

/** What the console needs before sign-in: no secret, no workspace data. */
export function registerConsoleRoutes(router: Router, options: ConsoleOptions): void {
  router.get('/v1/console-config', (ctx) => {
    refuseQuery(ctx.query);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = { temporal_ui_url: options.temporalUiUrl ?? null };
  });
}
