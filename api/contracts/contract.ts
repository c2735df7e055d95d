import type { z } from 'zod';

/**
 * What one route promises: its inputs (the very zod schemas the route
 * validates with) and its answers. api/openapi.ts turns the list into the
 * OpenAPI document; test/unit/openapi.test.ts fails when a route of the app
 * has no contract.
 */
/** `session`: the console's session cookie only (the routes of /auth that read or change the session itself). */
export type Access = 'public' | 'platform-admin' | 'workspace' | 'admin-or-workspace' | 'session';

export interface BodyContract {
  schema: z.ZodType;
  example: unknown;
  /** Besides application/json: the ingestion routes take NDJSON too. */
  ndjson?: boolean;
  /** The body may be left out (a POST without body). */
  optional?: boolean;
}

export interface AnswerContract {
  description: string;
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
  headers?: Record<string, string>;
  /** The answer is also offered as text/csv (api/csv-answer.ts) when asked with `Accept: text/csv`: what a CSV row is. */
  csv?: string;
}

export interface RouteContract {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form: /v1/policies/{id}. */
  path: string;
  summary: string;
  tag: string;
  access: Access;
  /** The permission the route's guard checks (README "Keys and roles"). */
  permission?: string;
  query?: z.ZodObject;
  /** Query parameters the route parses outside `query` (the flow filters). */
  extraQuery?: Record<string, { description: string }>;
  params?: Record<string, z.ZodType>;
  body?: BodyContract;
  responses: Record<number, AnswerContract>;
  /** Error statuses beyond those generated from the route's shape (auth, inputs, engines). */
  errors?: number[];
  /** Ingestion: 429 with Retry-After. */
  rateLimited?: boolean;
}

/** The koa-router form of a contract's path: /v1/policies/:id. */
export const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');
