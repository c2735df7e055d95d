import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ApiResponse } from './test-stack';

/**
 * Checks real answers against the OpenAPI document: the status must be one
 * the operation lists, the body must match that status's schema (JSON
 * bodies by JSON Schema 2020-12, the others by content type), and 429/503
 * must carry Retry-After. It records which operations were seen with a
 * success and with a refusal, for the coverage check at the end.
 */
type Schema = Record<string, unknown>;
interface Media { schema?: Schema }
interface Response { content?: Record<string, Media>; headers?: Record<string, unknown> }
interface Operation { responses: Record<string, Response> }
export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, Media> } } }>;
  components: { schemas: Record<string, Schema>; securitySchemes?: Record<string, { type: string; openIdConnectUrl?: string }> };
}

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly succeeded = new Set<string>();
  readonly refused = new Set<string>();

  constructor(private readonly doc: OpenApiDoc) {
    addFormats(this.ajv);
    // Every $ref of the document points at components.schemas: give the validator the document under an id.
    this.ajv.addSchema({ $id: 'openapi', components: doc.components }, 'openapi');
  }

  operations(): string[] {
    return Object.entries(this.doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  }

  /** Returns the problems with one answer; empty when it matches the document. */
  problems(method: string, path: string, res: ApiResponse): string[] {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    const name = `${method} ${path}`;
    if (!op) return [`${name} is missing from the document`];
    const documented = op.responses[String(res.status)];
    if (!documented) return [`${name} answered ${res.status}, which the document does not list (${res.text.slice(0, 200)})`];
    (res.status < 400 ? this.succeeded : this.refused).add(name);
    const out: string[] = [];
    if ((res.status === 429 || res.status === 503) && !res.headers.get('retry-after')) out.push(`${name} ${res.status} without Retry-After`);
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const media = documented.content?.[type] ?? (type === 'text/javascript' || type === 'text/css' || type === 'image/png' ? documented.content?.['application/octet-stream'] : undefined);
    if (!media) return [...out, `${name} ${res.status} answered ${type || 'no content type'}; the document says ${Object.keys(documented.content ?? {}).join(', ') || 'no body'}`];
    if (type === 'application/json' && media.schema) {
      const validate = this.ajv.compile(this.resolvable(media.schema));
      if (!validate(res.body)) out.push(`${name} ${res.status} body does not match: ${this.ajv.errorsText(validate.errors)} in ${res.text.slice(0, 300)}`);
    }
    return out;
  }

  /** Returns the problems with one webhook event a receiver got; empty when it matches the document's description of its type. */
  eventProblems(event: { type?: unknown }): string[] {
    const type = String(event.type);
    const text = JSON.stringify(event).slice(0, 300);
    const schema = this.doc.webhooks[type]?.post.requestBody.content['application/cloudevents+json']?.schema;
    if (!schema) return [`event type ${type} is missing from the document's webhooks`];
    const validate = this.ajv.compile(this.resolvable(schema));
    return validate(event) ? [] : [`${type} event does not match: ${this.ajv.errorsText(validate.errors)} in ${text}`];
  }

  /** Local refs (#/components/…) made to point into the registered document. */
  private resolvable(schema: Schema): Schema {
    return JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')) as Schema;
  }
}
