// The package's Node entry for those who import it by path (`import … from './pkg/index.js'`); by name,
// the exports map picks node.js, browser.js or workerd.js for the runtime.
export * from './node.js';
