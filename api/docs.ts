import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { notFound } from '../core/errors';
import { openApiDocument, type DocumentAuth } from './openapi';
import { pathParam } from './validation';

/**
 * The API's description at GET /v1/openapi.json and its reference at /docs,
 * rendered by Swagger UI from the swagger-ui-dist package (served from
 * node_modules: no CDN at run time). The page loads its scripts by URL (no
 * inline script) under a Content-Security-Policy that allows this origin only.
 */
const uiDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const uiVersion = (JSON.parse(fs.readFileSync(path.join(uiDir, 'package.json'), 'utf8')) as { version: string }).version;
/** The files the page uses; nothing else of the package is served. */
const assets: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// Swagger UI sets style attributes as it renders: inline styles are allowed, inline scripts are not.
// With single sign-on on, its Authorize dialog reads the provider's discovery document: that origin may be fetched too.
export const docsCspFor = (auth: DocumentAuth = {}) => [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  auth.oidcIssuer ? `connect-src 'self' ${new URL(auth.oidcIssuer).origin}` : "connect-src 'self'",
  "font-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nettel API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png?v=${uiVersion}">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css?v=${uiVersion}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js?v=${uiVersion}"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const init = `window.ui = SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** `auth`: the OpenID provider, declared in the document beside the key scheme when single sign-on is on. */
export function registerDocsRoutes(router: Router, auth: DocumentAuth = {}): void {
  const csp = docsCspFor(auth);
  router.get('/v1/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = openApiDocument(auth);
  });

  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });

  router.get('/docs/init.js', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = init;
  });

  // The package's files are named without a hash: the page asks for them with ?v=<version>, so a year of cache is safe.
  router.get('/docs/assets/:file', (ctx) => {
    const file = pathParam(ctx, 'file');
    const type = Object.hasOwn(assets, file) ? assets[file] : undefined;
    if (!type) throw notFound('file');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = type;
    ctx.body = fs.createReadStream(path.join(uiDir, file));
  });
}
