import { z } from 'zod';
import { personBounds } from './person';

/**
 * A person (core/person.ts) as a zod schema, with the bounds written there:
 * what sessions and requests are parsed with. Kept apart from core/person.ts
 * so that the workflow bundle, which imports that file, carries no zod.
 */
export const personSchema = z.object({
  subject: z.string().min(1).max(personBounds.subject),
  name: z.string().max(personBounds.name),
  email: z.string().max(personBounds.email),
});
