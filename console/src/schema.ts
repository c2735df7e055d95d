/**
 * The API's types for the console, all taken from `openapi.d.ts`, which the
 * set-up generates (scripts/console-types.mjs) from the OpenAPI document the
 * API serves at `GET /v1/openapi.json`. The fetch wrapper (api.ts) is typed by
 * `paths`; the views name answers through `components` below, so a changed
 * route or answer fails the console's type check and build.
 */
import type { paths } from './openapi';

export type { paths };
type Answer<P extends keyof paths, M extends 'get' | 'post' | 'delete'> = paths[P] extends Record<M, infer O>
  ? O extends { responses: infer R }
    ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer A } } ? A : never) : never }[keyof R]
    : never
  : never;

export interface components {
  schemas: {
    Whoami: Answer<'/v1/whoami', 'get'>;
    ConsoleSession: Answer<'/auth/session', 'get'>;
    SignInOptions: Answer<'/auth/config', 'get'>;
    Incident: Answer<'/v1/incidents/{id}', 'get'>;
    Attack: NonNullable<Answer<'/v1/incidents/{id}', 'get'>['attack']>;
    IncidentSignal: Answer<'/v1/incidents/{id}/signals', 'get'>['data'][number];
    Policy: Answer<'/v1/policies/{id}', 'get'>;
    Replay: Answer<'/v1/replays/{id}', 'get'>;
    Automation: Answer<'/v1/automations/{id}', 'get'>;
    Mitigation: Answer<'/v1/mitigations', 'get'>['data'][number];
  };
}
