import { z } from 'zod';
import { roles } from '../../core/roles';
import { personSchema, time } from './answers';
import type { RouteContract } from './contract';

/** GET /auth/callback's parameters: the provider's answer (a code, or an error), as RFC 6749 and RFC 9207 name them. */
export const callbackQuery = z
  .object({
    code: z.string().min(1).max(4096).optional(),
    state: z.string().min(1).max(512).optional(),
    iss: z.string().max(2048).optional(),
    session_state: z.string().max(512).optional(),
    scope: z.string().max(2048).optional(),
    // An error code of RFC 6749 (access_denied, login_required…): shown to the person, so only such a code, never free text.
    error: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'an OAuth error code').optional(),
    error_description: z.string().max(2048).optional(),
    error_uri: z.string().max(2048).optional(),
  })
  .strict();

export const keySessionBody = z.object({ key: z.string().min(1).max(256) }).strict();
export const workspaceBody = z.object({ org_id: z.string().min(1).max(64) }).strict();
export const logoutBody = z.object({}).strict();

const heldWorkspace = z.object({ org_id: z.string(), roles: z.array(z.enum(roles)) });

export const sessionAnswer = z
  .object({
    kind: z.enum(['person', 'key']).meta({ description: 'signed in through the OpenID provider, or with an API key' }),
    person: personSchema.nullable(),
    key_id: z.string().nullable().meta({ description: "a key session's key; null for a person" }),
    workspaces: z.array(heldWorkspace).meta({ description: 'the workspaces the session may act in, with the roles held in each' }),
    workspace: z.string().nullable().meta({ description: 'the chosen workspace (org id); null until one is chosen' }),
    roles: z.array(z.enum(roles)).meta({ description: 'the roles held in the chosen workspace' }),
    csrf_token: z.string().meta({ description: 'send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE made with the session' }),
    idle_expires_at: time.meta({ description: 'when the session ends if it is not used (SESSION_IDLE_MINUTES)' }),
    expires_at: time.meta({ description: 'when the session ends however it is used (SESSION_MAX_HOURS)' }),
  })
  .meta({ title: 'ConsoleSession' });

const redirect = (description: string) => ({ description, headers: { Location: 'where the browser goes next' }, schema: z.string(), contentType: 'text/plain' });

/** The console's sign-in (single sign-on, or an API key given once) and its session. */
export const authContracts: RouteContract[] = [
  {
    method: 'get', path: '/auth/config', summary: 'What the sign-in page offers, and whether the browser is signed in already', tag: 'Console sign-in', access: 'public',
    responses: {
      200: {
        description: 'the sign-in options',
        schema: z
          .object({
            single_sign_on: z.boolean().meta({ description: 'whether people sign in through the OpenID provider (GET /auth/login)' }),
            signed_in: z.boolean().meta({ description: 'whether this request carries a live console session (then GET /auth/session reads it)' }),
          })
          .meta({ title: 'SignInOptions' }),
      },
    },
  },
  {
    method: 'get', path: '/auth/login', summary: 'Starts a sign-in at the OpenID provider (authorization code with PKCE)', tag: 'Console sign-in', access: 'public',
    responses: { 302: redirect('to the provider’s authorization endpoint (the sign-in cookie is set)') }, errors: [400, 404, 503],
  },
  {
    method: 'get', path: '/auth/callback', summary: "The provider's answer: opens a session and sends the browser to the console", tag: 'Console sign-in',
    access: 'public', query: callbackQuery, errors: [401, 403, 404, 503],
    responses: { 303: redirect('to the console with the session cookie set; a browser whose sign-in failed goes to `/#/sign-in-failed?reason=…`, other clients get the error') },
  },
  {
    method: 'post', path: '/auth/key-session', summary: 'Opens a console session with an API key, given once', tag: 'Console sign-in', access: 'public',
    body: { schema: keySessionBody, example: { key: 'ntk_<id>_<secret>' } },
    responses: { 201: { description: 'the session (its cookie is set)', schema: sessionAnswer } }, errors: [401, 403, 429],
  },
  {
    method: 'get', path: '/auth/session', summary: "The console session: who, the workspaces and roles held, the chosen one, the CSRF token", tag: 'Console sign-in',
    access: 'session', responses: { 200: { description: 'the session', schema: sessionAnswer } },
  },
  {
    method: 'post', path: '/auth/workspace', summary: 'Chooses the workspace the session acts in', tag: 'Console sign-in', access: 'session',
    body: { schema: workspaceBody, example: { org_id: 'org_3f9a0c1b2d4e5f607182' } },
    responses: { 200: { description: 'the session', schema: sessionAnswer } },
  },
  {
    method: 'post', path: '/auth/logout', summary: 'Ends the session; answers the provider’s logout address where it offers one', tag: 'Console sign-in',
    access: 'session', body: { schema: logoutBody, example: {}, optional: true },
    responses: {
      200: {
        description: 'signed out (the cookie is cleared)',
        schema: z.object({ logout_url: z.string().nullable().meta({ description: "the provider's RP-initiated logout, to send the browser to; null without one" }) }).meta({ title: 'SignedOut' }),
      },
    },
  },
];
