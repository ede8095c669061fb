// Types of the CommonJS entry (`require('context-compactor')`, Node): the API of
// js/index.d.ts. No `init` / `initSync` here: the CommonJS build is instantiated on
// require and does not export them.
export * from './index.js'
