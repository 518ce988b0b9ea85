// Node entry of the Agents adapter (tests and tools that load an Agent's module in Node).
import './client.node.js';

export * from './agents.api.js';
