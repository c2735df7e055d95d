// Every workflow the Temporal worker registers.
export { replayWorkflow } from './replay';
export { automationWorkflow } from './automation';
