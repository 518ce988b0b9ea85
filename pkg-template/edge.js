// The whole package for edge runtimes (the `edge-light` condition): the client face and the server face.
export * from './client.edge.js';
export * from './server.edge.js';
