// Quick start, Node (>= 20): `node node.mjs`. The node build loads the wasm on import.
import { ContextCompactor } from 'context-compactor'
import { transcript } from './transcript.mjs'

const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4_000 })
const messages = transcript()
const decision = compactor.check(null, messages)
const out = await compactor.compact(null, messages)
console.log(JSON.stringify({ runtime: 'node', decided: decision.compact, status: out.status, before: out.before.messages, after: out.after.messages }))
