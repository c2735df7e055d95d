import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { derivedId } from '../core/ids';
import { automationWorkflow } from '../workflows/automation';
import { attackEndedSignal } from '../workflows/automation-messages';
import type { AutomationInput } from '../workflows/automation-contract';

/** A run's id: one per workspace, incident and playbook version, so an incident seen again starts nothing new. */
export const automationIdOf = (orgId: string, incidentId: string, playbookId: string, playbookVersion: number) =>
  derivedId('aut', orgId, incidentId, playbookId, playbookVersion);

/** Workflow ids are business keys: the org and the run id. */
export const automationWorkflowId = (orgId: string, automationId: string) => `automation:${orgId}:${automationId}`;

/**
 * Starts an automation run's workflow, once: a second start of the same id is
 * refused by Temporal even after the first closed, and answers false here.
 */
export async function startAutomationWorkflow(client: Client, taskQueue: string, input: AutomationInput): Promise<boolean> {
  try {
    await client.workflow.start(automationWorkflow, {
      taskQueue,
      workflowId: automationWorkflowId(input.orgId, input.automationId),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [input],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** Tells a run its incident resolved; false when the run has ended (nothing of it is held any more). */
export async function signalAttackEnded(client: Client, orgId: string, automationId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(automationWorkflowId(orgId, automationId)).signal(attackEndedSignal);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
