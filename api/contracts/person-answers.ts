import { z } from 'zod';

/** A person as answers name them: beside a key, a requester, an approver, an audit entry's actor. */
export const personSchema = z
  .object({
    subject: z.string().meta({ description: "the OpenID provider's `sub`; `key:<key_id>` for a key minted before keys had owners" }),
    name: z.string().meta({ description: "'' when unknown" }),
    email: z.string().meta({ description: "'' when unknown" }),
  })
  .meta({ title: 'Person' });
