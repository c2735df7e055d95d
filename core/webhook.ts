import type { WebhookEventType } from './webhook-events';

/**
 * A webhook subscription of a workspace. `failing`: an event exhausted its
 * retries (24 hours by default); new events are still sent, and the first
 * delivered one, or any change to the subscription, makes it `active` again.
 */
export type WebhookStatus = 'active' | 'failing' | 'deleted';

export interface Webhook {
  org_id: string;
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  /** The signing secret as stored (sealed, see core/secret-box); never shown after creation. */
  secret: string;
  status: WebhookStatus;
  created_at: number;
  updated_at: number;
  /** When the subscription was marked failing; 0 when it is not. */
  failing_since: number;
  version: number;
}

export type DeliveryStatus = 'retrying' | 'delivered' | 'failed';

/** One event's delivery to one subscription, as its latest attempt left it. */
export interface WebhookDelivery {
  org_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  /** HTTP status of the last answer; 0 when there was none (refused, unreachable, timed out). */
  response_code: number;
  latency_ms: number;
  error: string;
  first_attempt_at: number;
  last_attempt_at: number;
  /** When the next attempt is due; 0 when there will be none. */
  next_attempt_at: number;
}
