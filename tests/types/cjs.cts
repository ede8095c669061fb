// The CommonJS types (`require('context-compactor')`): the API without init / initSync,
// which are undefined in the CommonJS build (issue 16.5).
import cc = require('context-compactor')
const c = new cc.ContextCompactor({ format: 'openai-chat' })
export const decision = c.check(null, [{ role: 'user', content: 'hi' }])
// @ts-expect-error no init in CommonJS
cc.init()
// @ts-expect-error no initSync in CommonJS
cc.initSync({ module: new Uint8Array() })
