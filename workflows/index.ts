// Every workflow the Temporal worker registers.
export { replayWorkflow } from './replay';
