// tsc --strict over the README's AI SDK lines (I-1): the helpers fit the SDK's own types.
import { generateText, streamText, wrapLanguageModel, stepCountIs, type LanguageModel, type ToolSet } from 'ai'
import { compactionMiddleware, prepareStepCompaction } from 'context-compactor/ai-sdk'
import { sqliteStore } from 'context-compactor/stores'

/** The README's lines over a session store (W-5): a SQLite database handle. */
export async function overSession(model: Exclude<LanguageModel, string>, tools: ToolSet, db: Parameters<typeof sqliteStore>[0]) {
  const prepareStep = prepareStepCompaction({ contextWindow: 128_000, tools, session: sqliteStore(db, 'chat-42') })
  const r = await generateText({ model, tools, prompt: 'fix the parser', stopWhen: stepCountIs(30), prepareStep })
  const request = await prepareStep.view.session?.request()
  const middleware = compactionMiddleware({ contextWindow: 128_000, session: sqliteStore(db, 'chat-43'), sessionId: 'chat-43', timeoutMs: 30_000 })
  const state = middleware.view.state?.revision
  // @ts-expect-error a session store has load and save
  compactionMiddleware({ session: { load: () => null } })
  return [r.text, request, state]
}

export async function run(model: Exclude<LanguageModel, string>, tools: ToolSet) {
  const wrapped = wrapLanguageModel({ model: model as any, middleware: compactionMiddleware({ contextWindow: 128_000 }) })
  await generateText({ model: wrapped, prompt: 'hi' })
  const r = await generateText({
    model, tools, prompt: 'fix the parser', stopWhen: stepCountIs(30),
    prepareStep: prepareStepCompaction({ contextWindow: 128_000, tools, summarize: async (req) => req.messages.map((m) => m.content).join('\n').slice(0, 2000) }),
  })
  const s = streamText({ model, prompt: 'x', prepareStep: prepareStepCompaction({ contextWindow: 64_000 }) })
  // @ts-expect-error contextWindow is a number of tokens
  prepareStepCompaction({ contextWindow: '128k' })
  return r.text + (await s.text)
}
