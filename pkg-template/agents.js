// Default entry of the Agents adapter (a bundler with neither the workerd nor the node condition).
import './client.browser.js';

export * from './agents.api.js';
