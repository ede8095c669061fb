// Entry of the esbuild smoke test: the package imported by name, as an app would.
export * from 'context-compactor'
export { default } from 'context-compactor'
