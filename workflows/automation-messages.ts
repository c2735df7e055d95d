import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AutomationState, ChangeInput } from './automation-contract';
import type { ApprovalInput, DecisionInput } from './decision-contract';

/**
 * What an automation run's workflow (workflows/automation.ts) answers: its
 * signals, updates and query, and why an update fails, for the API and for
 * whoever drives Temporal directly.
 */
export { decisionFailures } from './approval-gate';

/** Signals for whoever drives Temporal directly: checked like the API's decisions (a decision token is required). */
export const approveAutomationSignal = defineSignal<[ApprovalInput]>('approve');
export const denyAutomationSignal = defineSignal<[ApprovalInput]>('deny');
export const decideAutomationUpdate = defineUpdate<AutomationState, [DecisionInput]>('decide');
/** Ends every active mitigation of the run now. */
export const withdrawAutomationUpdate = defineUpdate<AutomationState, [ChangeInput]>('withdraw');
/** Holds every active mitigation `minutes` longer, if the policies allow it. */
export const extendAutomationUpdate = defineUpdate<AutomationState, [ChangeInput]>('extend');
export const automationStatusQuery = defineQuery<AutomationState>('automationStatus');
/** The incident the run answers resolved (its attack ended): the actions held until then are withdrawn. Carries nothing: the run reads no claim from it. */
export const attackEndedSignal = defineSignal('attackEnded');

/** Why a withdraw or extend update failed (the API answers 403, 409 and 503). */
export const changeFailures = { refused: 'CHANGE_REFUSED', notActive: 'NOT_ACTIVE', denied: 'POLICY_DENIED', unverifiable: 'CHANGE_UNVERIFIABLE' } as const;

